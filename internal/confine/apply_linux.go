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
// The system paths of p.Read and p.Devices (systemRead's and
// systemDeviceFiles') are left out when held is set: the caller adds
// them from descriptors held open (addSystemHeld), which costs no open
// and no close per start.
func fsRules(p *Policy, held bool) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	add := func(paths []string, dir, file landlock.AccessFSSet, held, device bool) error {
		for _, path := range paths {
			if held && heldSystemPath(path, device) {
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
		device    bool
	}{
		{p.Read, dirRead, fileRead, held, false},
		{p.Write, dirWrite, fileWrite, false, false},
		{p.Exec, dirRead, fileExec, false, false},
		{p.Devices, device, device, held, true},
	} {
		if err := add(l.paths, l.dir&presets[p.ABI].HandledAccessFS, l.file&presets[p.ABI].HandledAccessFS, l.held, l.device); err != nil {
			return nil, err
		}
	}
	return rules, nil
}

// The securebits (capabilities(7)) a confined thread locks: root gains
// no capability at execve (noroot), keep-caps stays off, ambient
// capabilities cannot be raised; each locked, so that no descendant can
// turn it back.
const (
	secbitNoroot                  = 1 << 0
	secbitNorootLocked            = 1 << 1
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7

	confinedSecurebits = secbitNoroot | secbitNorootLocked | secbitKeepCapsLocked |
		secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// dropCapabilities leaves the calling thread (of a host running as root)
// no capability, and no way back to one: the securebits locked so that
// an execve as root grants none, the ambient set cleared, then the
// effective, permitted and inheritable sets emptied. With no_new_privs,
// set after, a setuid binary or a file's capabilities grant none either:
// at execve the kernel caps the new permitted set at the old one, empty.
// Where the securebits cannot be set (one of them locked otherwise by an
// ancestor), every capability is dropped from the bounding set instead,
// one call each.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, confinedSecurebits, 0, 0, 0); err != nil {
		if err := dropBoundingSet(); err != nil {
			return err
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

// dropBoundingSet drops every capability from the calling thread's
// bounding set.
func dropBoundingSet() error {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	return nil
}
