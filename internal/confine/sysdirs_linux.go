//go:build linux

package confine

import (
	"fmt"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// systemDir is a system directory of systemRead held open (O_PATH) for
// the host process's life, so that a confined start adds its Landlock
// rule without an open and a close of its own (45 paths cost a third of a
// millisecond per start). Only directories qualify: a system file such as
// /etc/resolv.conf is replaced by rename, and a rule made from an old
// descriptor would grant the old file; a directory such as /usr/lib is
// not. A directory reached through a symbolic link to another one
// (/lib -> usr/lib) is held once: its rule would be the same.
type systemDir struct {
	path string
	fd   int
}

// heldDirs are the system directories held open and the paths they
// cover (a path deduplicated into another's descriptor is covered).
type heldDirs struct {
	dirs    []systemDir
	covered map[string]bool
}

// systemDirs opens the system directories once per host process: those
// of systemRead that exist and are directories, each identified by its
// device and inode, the first path of each kept. The descriptors are
// close-on-exec and never closed (the process owns them until it exits).
var systemDirs = sync.OnceValue(func() heldDirs {
	h := heldDirs{covered: map[string]bool{}}
	seen := map[[2]uint64]bool{}
	for _, path := range systemReadable() {
		if !systemEntries()[path] {
			continue // a file: opened at each start
		}
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			continue
		}
		h.covered[path] = true
		id := [2]uint64{uint64(st.Dev), st.Ino}
		if seen[id] {
			unix.Close(fd)
			continue
		}
		seen[id] = true
		h.dirs = append(h.dirs, systemDir{path: path, fd: fd})
	}
	return h
})

// heldSystemDir reports whether path's rule is added from a held
// descriptor (addSystemDirs), not by path.
func heldSystemDir(path string) bool { return systemDirs().covered[path] }

// holdsSystemDirs reports whether p reads every held system directory:
// then they are added from their descriptors; otherwise (a deny took one
// away) every path is added by path, as planned.
func (p *Policy) holdsSystemDirs() bool {
	h := systemDirs()
	read := make(map[string]bool, len(h.covered))
	for _, path := range p.Read {
		if h.covered[path] {
			read[path] = true
		}
	}
	return len(read) == len(h.covered)
}

// addSystemDirs adds to the ruleset rulesetFD a rule granting access
// beneath each held system directory.
func addSystemDirs(rulesetFD int, access landlock.AccessFSSet) error {
	for _, d := range systemDirs().dirs {
		attr := ll.PathBeneathAttr{ParentFd: d.fd, AllowedAccess: uint64(access)}
		if err := ll.LandlockAddPathBeneathRule(rulesetFD, &attr, 0); err != nil {
			return fmt.Errorf("landlock rule for %s: %w", d.path, err)
		}
	}
	return nil
}
