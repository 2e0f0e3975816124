//go:build unix

package pluginpkg

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// tooOpen are the mode bits that make a run directory unsafe: write by
// its group or others.
const tooOpen = 0o022

// repairRunDir makes the directory dir (fi, its Lstat) private when it is
// writable by its group or others and the current user owns it, and
// refuses it when another user does; see PrepareRunDir. It works on a
// descriptor opened with O_NOFOLLOW, checked to be the directory fi
// describes.
func repairRunDir(dir string, fi fs.FileInfo) (string, error) {
	if fi.Mode().Perm()&tooOpen == 0 {
		return "", nil
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", runDirWhat, dir, err)
	}
	defer f.Close()
	cur, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", runDirWhat, dir, err)
	}
	if !cur.IsDir() || !os.SameFile(fi, cur) {
		return "", fmt.Errorf("%s %s was replaced while it was checked: refusing to use it", runDirWhat, dir)
	}
	perm := cur.Mode().Perm()
	if perm&tooOpen == 0 {
		return "", nil
	}
	if st, ok := cur.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s %s is writable by its group or others (mode %04o) and owned by uid %d, not this user (uid %d): refusing to use it",
			runDirWhat, dir, perm, st.Uid, os.Getuid())
	}
	if err := f.Chmod(runDirMode); err != nil {
		return "", fmt.Errorf("%s %s is writable by its group or others (mode %04o), and making it %04o failed: %w", runDirWhat, dir, perm, runDirMode, err)
	}
	return fmt.Sprintf("%s %s was writable by its group or others (mode %04o): made it %04o", runDirWhat, dir, perm, runDirMode), nil
}
