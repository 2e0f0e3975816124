package pluginpkg

import (
	"os"
	"syscall"
)

// statOf identifies the version of a file fi describes by size, modification
// time, change time and inode. The change time is what a rewrite that
// restores the old modification time (touch -d, cp -p, tar) cannot hide.
func statOf(fi os.FileInfo) fileStat {
	s := fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = st.Ino
		s.ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return s
}
