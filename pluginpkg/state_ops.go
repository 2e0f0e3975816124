package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// Enable marks an installed package enabled. It returns an error wrapping
// ErrNotInstalled when home has no package of that name.
func Enable(home, name string) error {
	return updateEntry(home, name, func(e *stateEntry) { e.Enabled = true })
}

// Disable marks an installed package disabled: LoadInstalled still lists it,
// with Enabled false. It returns an error wrapping ErrNotInstalled when home
// has no package of that name.
func Disable(home, name string) error {
	return updateEntry(home, name, func(e *stateEntry) { e.Enabled = false })
}

// Pin records a package's pin: an executable pin (the sha256 of its runtime
// executable, 64 lower-case hex digits, see ExecutableSHA256) or a package
// pin ("package:<files>:<command>", see Package.PackagePin). An empty pin
// removes it. It returns an error wrapping ErrNotInstalled when home has no
// package of that name.
func Pin(home, name, pin string) error {
	if pin != "" && !pkgfiles.ValidPin(pin) {
		return fmt.Errorf("pin %s: %q is neither a sha256 (64 lower-case hex digits) nor a package pin (\"package:<64 hex>:<64 hex>\")", name, pin)
	}
	return updateEntry(home, name, func(e *stateEntry) { e.Pin = pin })
}

// updateEntry applies change to name's state entry under the home lock and
// writes the state atomically.
func updateEntry(home, name string, change func(*stateEntry)) error {
	return updateEntryChecked(home, name, nil, change)
}

// updateEntryChecked is updateEntry; check, when set, is called with the
// absolute home and the entry before the change, under the lock, and its
// error stops the update.
func updateEntryChecked(home, name string, check func(string, stateEntry) error, change func(*stateEntry)) error {
	home, unlock, err := lockForPackage(home, name)
	if err != nil {
		return err
	}
	defer unlock()
	if fi, err := os.Stat(filepath.Join(home, PackagesDir, name)); err != nil || !fi.IsDir() {
		return notInstalled(home, name)
	}
	st, err := readState(home)
	if err != nil {
		return err
	}
	e := st.entry(name)
	if check != nil {
		if err := check(home, e); err != nil {
			return err
		}
	}
	change(&e)
	st.Packages[name] = e
	return writeStateLocked(home, st)
}

// Remove uninstalls a package: it removes packages/<name>, the previous
// version an upgrade kept in packages/.previous/<name>, and its state
// entry. When packages/<name> is a symbolic link, only the link is
// removed, never its target. When only a stale state entry or a previous
// version exists (LoadInstalled warns about the first), Remove deletes it
// and succeeds. It returns an error wrapping ErrNotInstalled when none
// exists. It deletes a killed operation's leftovers as InstallSource
// does, and refuses, as it does, a packages/.staging or packages/.previous
// that is a symbolic link or not a directory. It checks nothing about
// what depends on the package: RemoveChecked does.
//
// The directory is first renamed into packages/.staging, so the package
// disappears at once; if writing the state then fails it is put back.
func Remove(home, name string) error {
	home, unlock, err := lockForPackage(home, name)
	if err != nil {
		return err
	}
	defer unlock()
	return removeLocked(home, name)
}

// lockForPackage checks that name can be a package of home and takes the
// home lock. It returns the absolute home and the unlock function.
func lockForPackage(home, name string) (string, func(), error) {
	home, err := filepath.Abs(home)
	if err != nil {
		return "", nil, err
	}
	if !safeName(name) {
		return "", nil, notInstalled(home, name)
	}
	if _, err := os.Stat(home); err != nil {
		return "", nil, fmt.Errorf("package %q: %w", name, err)
	}
	unlock, err := lockHome(home)
	if err != nil {
		return "", nil, err
	}
	return home, unlock, nil
}

// removeLocked is Remove with the home lock held.
func removeLocked(home, name string) error {
	if err := cleanLeftoversLocked(home); err != nil {
		return err
	}
	st, err := readState(home)
	if err != nil {
		return err
	}
	_, hasEntry := st.Packages[name]
	delete(st.Packages, name)
	dest, prev := filepath.Join(home, PackagesDir, name), previousPath(home, name)
	_, derr := os.Lstat(dest)
	_, perr := os.Lstat(prev)
	if errors.Is(derr, fs.ErrNotExist) && errors.Is(perr, fs.ErrNotExist) && !hasEntry {
		return notInstalled(home, name)
	}
	trash, err := makeStage(home, name)
	if err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	defer dropStage(trash)
	aside := filepath.Join(trash, name)
	if derr == nil {
		if err := os.Rename(dest, aside); err != nil {
			return fmt.Errorf("remove %s: %w", name, err)
		}
	}
	if err := writeStateLocked(home, st); err != nil {
		if derr == nil {
			err = errors.Join(err, os.Rename(aside, dest))
		}
		return err
	}
	if perr == nil {
		if err := os.Rename(prev, filepath.Join(trash, droppedName)); err != nil {
			return fmt.Errorf("remove %s: package removed, but not its previous version: %w", name, err)
		}
		os.Remove(filepath.Dir(prev)) // fails, harmlessly, while other versions are kept
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("remove %s: package removed, but deleting its files failed: %w", name, err)
	}
	return nil
}

// safeName reports whether name can be a single entry under packages/: not
// empty, no separators, not hidden, "." or "..". Names failing it cannot be
// installed, so callers report ErrNotInstalled.
func safeName(name string) bool {
	return name != "" && !strings.HasPrefix(name, ".") && !strings.ContainsAny(name, `/\`) &&
		!strings.ContainsRune(name, 0)
}
