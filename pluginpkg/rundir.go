package pluginpkg

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// runDirMode is the mode PrepareRunDir makes a run directory with, and
// repairs a too open one to: only its owner may list, enter or change it.
const runDirMode = 0o700

// runDirWhat names a run directory in errors and notes.
const runDirWhat = "run directory"

// PrepareRunDir makes dir ready to hold a run lock or an admin socket (a
// home's RunDir; LockRun and admin.Listen call it) and returns a note, a
// sentence for the operator, when it had to repair it:
//
//   - missing, dir is created with mode 0700 (its missing parents too);
//   - a symbolic link, or anything but a directory, is refused with an
//     error naming dir (a lock or socket made through a link would live
//     wherever it points);
//   - a directory writable by its group or others (mode&0o022; the sticky
//     bit does not help: whoever may write there may delete or replace
//     the lock file, so that a second kernel takes the home, or the
//     socket, so that clients talk to an impostor) is made 0700 when the
//     current user owns it, with a note saying so, and refused when
//     another user owns it;
//   - a directory that others may only read and enter is used as it is:
//     the lock file and the socket are 0600 themselves.
//
// Only the last component is checked: symbolic links among dir's parents
// (macOS's /tmp) are followed. Where file modes do not apply (Windows),
// only the first two rules hold. On unix the mode is checked and repaired
// through a descriptor opened without following links, so a directory
// replaced by a link meanwhile is refused, never changed through it.
func PrepareRunDir(dir string) (note string, err error) {
	if err := os.MkdirAll(filepath.Dir(dir), runDirMode); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, runDirMode); err == nil || !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if err := dirProblem(dir, runDirWhat, fi, "refusing to use it"); err != nil {
		return "", err
	}
	return repairRunDir(dir, fi)
}
