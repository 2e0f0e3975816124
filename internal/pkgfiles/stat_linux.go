package pkgfiles

import (
	"os"
	"syscall"
)

// StatOf identifies the version of a file fi describes by size, modification
// time, change time and inode. The change time is what a rewrite that
// restores the old modification time (touch -d, cp -p, tar) cannot hide.
func StatOf(fi os.FileInfo) Stat {
	s := Stat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ino = st.Ino
		s.Ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
	return s
}
