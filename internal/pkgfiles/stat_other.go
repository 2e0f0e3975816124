//go:build !linux

package pkgfiles

import "os"

// StatOf identifies the version of a file fi describes by size and
// modification time only: the portable fallback (stat_linux.go adds the
// change time and inode).
func StatOf(fi os.FileInfo) Stat {
	return Stat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
}
