package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The hidden directories of packages/, as their errors name them.
const (
	stagingWhat  = "staging directory"
	previousWhat = "previous-versions directory"
)

// checkHiddenDirs refuses a packages/.staging or packages/.previous that
// exists and is not a plain directory: a symbolic link (deleting or
// renaming under it would delete or write outside the home) or anything
// else. A missing one is fine. It only reads.
//
// Inside packages/.previous, a <name> entry that is a symbolic link is
// allowed: an upgrade of a package whose directory is a link (which the
// loader follows) keeps the link there, and every operation moves or
// unlinks such an entry, never writes through it.
func checkHiddenDirs(home string) error {
	pkgs := filepath.Join(home, PackagesDir)
	return errors.Join(
		plainDir(filepath.Join(pkgs, StagingDir), stagingWhat, false),
		plainDir(filepath.Join(pkgs, PreviousDir), previousWhat, false))
}

// plainDir checks that path, when it exists, is a directory and not a
// symbolic link; what names it in the error. With create, a missing path
// is made (mode 0755; its parent must exist): os.Mkdir does not follow a
// link at path, so a link planted since is still refused.
func plainDir(path, what string, create bool) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err = os.Mkdir(path, 0o755); err == nil || !errors.Is(err, fs.ErrExist) {
			return err
		}
		fi, err = os.Lstat(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	return dirProblem(path, what, fi, "refusing to delete or write through it")
}

// dirProblem returns the error for a path that must be a directory the
// home owns, with fi its Lstat, or nil when it is one. A symbolic link is
// refused with linkAction, saying what the caller will not do through it;
// anything but a directory (a file, a device, a Windows junction) with
// "refusing to use it".
func dirProblem(path, what string, fi fs.FileInfo, linkAction string) error {
	switch t := fi.Mode().Type(); t {
	case fs.ModeDir:
		return nil
	case fs.ModeSymlink:
		target, _ := os.Readlink(path)
		return fmt.Errorf("%s %s is a symbolic link (to %q): %s", what, path, target, linkAction)
	default:
		return fmt.Errorf("%s %s is not a directory (%s): refusing to use it", what, path, kindOf(t))
	}
}

// kindOf names a file type that is not a directory or a link.
func kindOf(t fs.FileMode) string {
	switch {
	case t == 0:
		return "a regular file"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "an irregular file, such as a Windows junction"
}
