//go:build linux

package confine

import (
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The file-system rights a policy grants. Read never includes execute:
// only Policy.Exec files may be executed.
const (
	fileRead  = landlock.AccessFSSet(ll.AccessFSReadFile)
	dirRead   = fileRead | ll.AccessFSReadDir
	fileWrite = fileRead | ll.AccessFSWriteFile | ll.AccessFSTruncate
	dirWrite  = dirRead | fileWrite | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSym | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSRefer
	fileExec = fileRead | ll.AccessFSExecute
	device   = fileRead | ll.AccessFSWriteFile
)

// presets are go-landlock's configurations by ABI: each handles every
// right its ABI knows, so that a right no rule grants is denied.
var presets = []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
	landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// fsRules returns the Landlock rules of p's paths: a directory gets the
// directory rights, any other file only the file rights, as Landlock
// requires. A path that is gone is skipped.
//
// The system directories of p.Read (systemRead's) are left out when
// heldDirs is set: the caller adds them from descriptors held open
// (addSystemDirs), which costs no open and no close per start.
func fsRules(p *Policy, heldDirs bool) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	add := func(paths []string, dir, file landlock.AccessFSSet, held bool) error {
		for _, path := range paths {
			if held && heldSystemDir(path) {
				continue
			}
			isDir, ok := systemEntries()[path] // stat'ed once per host process
			if !ok {
				fi, err := os.Stat(path)
				switch {
				case os.IsNotExist(err):
					continue
				case err != nil:
					return fmt.Errorf("landlock rule for %s: %w", path, err)
				}
				isDir = fi.IsDir()
			}
			access := file
			if isDir {
				access = dir
			}
			// A path gone since it was stat'ed grants nothing, and fails nothing.
			rules = append(rules, landlock.PathAccess(access, path).IgnoreIfMissing())
		}
		return nil
	}
	for _, l := range []struct {
		paths     []string
		dir, file landlock.AccessFSSet
		held      bool
	}{
		{p.Read, dirRead, fileRead, heldDirs},
		{p.Write, dirWrite, fileWrite, false},
		{p.Exec, dirRead, fileExec, false},
		{p.Devices, device, device, false},
	} {
		if err := add(l.paths, l.dir&presets[p.ABI].HandledAccessFS, l.file&presets[p.ABI].HandledAccessFS, l.held); err != nil {
			return nil, err
		}
	}
	return rules, nil
}

// dropCapabilities drops every capability from the bounding set, then
// the effective, permitted and inheritable sets, and the ambient ones.
func dropCapabilities() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}
