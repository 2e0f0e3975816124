//go:build linux

package confine

import (
	"fmt"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// heldEntry is a system path of systemRead or systemDeviceFiles held open
// (O_PATH) for the host process's life, so that a confined start adds its
// Landlock rule without an open and a close of its own (each costs a
// system call; 45 paths cost a third of a millisecond per start).
//
// A directory such as /usr/lib is not replaced while the host runs, and
// its rule is made from the held descriptor as it is. A file such as
// /etc/resolv.conf can be replaced by rename, and a rule made from an old
// descriptor would grant the old file: a start stats the path (one call,
// no open, no close) and uses the held descriptor only when the path
// still names the file it holds; otherwise it opens the path for that
// start, as an unheld path is. A path reached through a symbolic link to
// one already held (/lib -> usr/lib) shares its descriptor.
type heldEntry struct {
	path   string
	fd     int
	dev    uint64
	ino    uint64
	dir    bool
	device bool // a systemDeviceFiles entry: granted device rights
}

// heldSystem is the held entries and the paths they cover, by list.
type heldSystem struct {
	entries []heldEntry
	read    map[string]bool // systemRead paths covered
	devices map[string]bool // systemDeviceFiles paths covered
}

// systemHeld opens the system paths once per host process: those of
// systemRead and systemDeviceFiles that exist, each identified by its
// device and inode, the first path of each kept. The descriptors are
// close-on-exec and never closed (the process owns them until it exits).
var systemHeld = sync.OnceValue(func() heldSystem {
	h := heldSystem{read: map[string]bool{}, devices: map[string]bool{}}
	seen := map[[3]uint64]bool{}
	hold := func(paths []string, device bool, covered map[string]bool) {
		for _, path := range paths {
			flags := unix.O_PATH | unix.O_CLOEXEC
			if systemEntries()[path] {
				flags |= unix.O_DIRECTORY
			}
			fd, err := unix.Open(path, flags, 0)
			if err != nil {
				continue // left to the per-start path rules
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				unix.Close(fd)
				continue
			}
			covered[path] = true
			kind := uint64(0)
			if device {
				kind = 1
			}
			id := [3]uint64{uint64(st.Dev), st.Ino, kind}
			if seen[id] {
				unix.Close(fd)
				continue
			}
			seen[id] = true
			h.entries = append(h.entries, heldEntry{path: path, fd: fd, dev: uint64(st.Dev), ino: st.Ino,
				dir: st.Mode&unix.S_IFMT == unix.S_IFDIR, device: device})
		}
	}
	hold(systemReadable(), false, h.read)
	hold(systemDevices(), true, h.devices)
	return h
})

// heldSystemPath reports whether path's rule, in the read list or the
// device list, is added from a held descriptor (addSystemHeld), not by
// path.
func heldSystemPath(path string, device bool) bool {
	if device {
		return systemHeld().devices[path]
	}
	return systemHeld().read[path]
}

// holdsSystem reports whether p reads every held system path and grants
// every held device: then they are added from their descriptors;
// otherwise (normalizing merged one into a wider grant) every path is
// added by path, as planned.
func (p *Policy) holdsSystem() bool {
	h := systemHeld()
	return coversAll(p.Read, h.read) && coversAll(p.Devices, h.devices)
}

// coversAll reports whether list holds every path of want.
func coversAll(list []string, want map[string]bool) bool {
	n := 0
	for _, path := range list {
		if want[path] {
			n++
		}
	}
	return n == len(want)
}

// addSystemHeld adds to the ruleset rulesetFD a rule for each held
// system path: directories and files readable with read rights, devices
// with device rights, each masked by handled (the rights the ruleset's
// ABI handles).
func addSystemHeld(rulesetFD int, handled landlock.AccessFSSet) error {
	for _, e := range systemHeld().entries {
		access := fileRead
		switch {
		case e.device:
			access = device
		case e.dir:
			access = dirRead
		}
		if err := e.addRule(rulesetFD, access&handled); err != nil {
			return fmt.Errorf("landlock rule for %s: %w", e.path, err)
		}
	}
	return nil
}

// addRule adds e's rule: from the held descriptor when e is a directory
// or its path still names the held file; from the path, opened for this
// rule alone, when the file was replaced; none when the path is gone.
func (e heldEntry) addRule(rulesetFD int, access landlock.AccessFSSet) error {
	fd := e.fd
	if !e.dir {
		var st unix.Stat_t
		switch err := unix.Stat(e.path, &st); {
		case err == unix.ENOENT:
			return nil // gone since: grants nothing, fails nothing
		case err != nil:
			return err
		case uint64(st.Dev) != e.dev || st.Ino != e.ino:
			fresh, err := unix.Open(e.path, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err == unix.ENOENT {
				return nil
			}
			if err != nil {
				return err
			}
			defer unix.Close(fresh)
			fd = fresh
		}
	}
	attr := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: uint64(access)}
	return ll.LandlockAddPathBeneathRule(rulesetFD, &attr, 0)
}
