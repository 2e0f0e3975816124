//go:build !linux

package pluginpkg

import "os"

// statOf identifies the version of a file fi describes by size and
// modification time only: the portable fallback (stat_linux.go adds the
// change time and inode).
func statOf(fi os.FileInfo) fileStat {
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
