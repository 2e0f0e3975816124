package pluginpkg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// ErrNoPrevious is returned (wrapped; test with errors.Is) by Rollback
// when no previous version of the package is kept in
// packages/.previous/<name>: it was never upgraded, or was removed since.
var ErrNoPrevious = errors.New("no previous version kept")

// Rollback puts back the version of a package that its last upgrade
// replaced, kept in packages/.previous/<name>, and keeps the version it
// replaces there instead, so a second Rollback undoes the first. The state
// entry keeps its enabled flag and pin; its digest becomes the restored
// files'. The previous version must load.
//
// It runs under the home lock, after deleting leftovers as InstallSource
// does (and, as it does, refuses a packages/.staging or packages/.previous
// that is a symbolic link or not a directory). On Linux the two
// directories are exchanged atomically; elsewhere three renames put them
// in place, between which the package is absent (a crash there loses the
// version rolled back from, never the one restored; running Rollback
// again completes it). If writing the state fails, the directories are
// put back. It ends a bake in progress (Package.Bake).
//
// It returns the error wrapping ErrNoPrevious, or ErrNotInstalled when
// name cannot be a package. In the result, Package is the restored
// version and Previous the one rolled back from (nil when none was
// installed).
func Rollback(home, name string) (*InstallResult, error) {
	return rollback(home, name, nil)
}

// rollback is Rollback; check, when set, is called with the package's
// state entry under the lock, and its error stops the rollback before
// anything changes.
func rollback(home, name string, check func(stateEntry) error) (*InstallResult, error) {
	home, unlock, err := lockForPackage(home, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := cleanLeftoversLocked(home); err != nil {
		return nil, err
	}
	st, err := readState(home)
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(st.entry(name)); err != nil {
			return nil, err
		}
	}
	r := &roller{installer: installer{home: home, name: name, dest: filepath.Join(home, PackagesDir, name)}, prev: previousPath(home, name)}
	if _, err := os.Lstat(r.prev); err != nil {
		return nil, fmt.Errorf("package %q in %s: %w", name, home, ErrNoPrevious)
	}
	digest, err := r.check()
	if err != nil {
		return nil, err
	}
	r.inspect()
	defer func() {
		if r.stage != "" {
			dropStage(r.stage)
		}
	}()
	if err := r.swap(); err != nil {
		return nil, err
	}
	e := st.entry(name)
	e.Digest = digest.Sum
	e.Origin, e.PreviousOrigin = e.PreviousOrigin, e.Origin
	e.Bake = nil // a rollback ends a bake
	st.Packages[name] = e
	if err := writeStateLocked(home, st); err != nil {
		return nil, errors.Join(fmt.Errorf("rollback %s: %w", name, err), r.unswap())
	}
	res := &InstallResult{Digest: digest.Sum}
	if res.Package, err = r.loadPlaced(home, loadOpts{}); err != nil {
		return nil, err
	}
	if r.exists {
		res.Previous, _ = loadPackage(home, name, loadOpts{pkgsDir: filepath.Dir(r.prev)})
		res.PreviousDigest, res.Changed = diffDigests(r.curDigest, digest)
	}
	return res, nil
}

// roller is one Rollback with the home lock held.
type roller struct {
	installer
	prev string
	// aside is where, in the staging directory, the fallback moves the
	// installed version on its way to packages/.previous ("" when it did
	// not).
	aside string
}

// check loads and digests the previous version.
func (r *roller) check() (*FileDigest, error) {
	if pkg, warns := loadPackage(r.home, r.name, loadOpts{pkgsDir: filepath.Dir(r.prev)}); pkg == nil {
		errs := []error{fmt.Errorf("rollback %s: the previous version does not load", r.name)}
		for _, w := range warns {
			errs = append(errs, errors.New(w.String()))
		}
		return nil, errors.Join(errs...)
	}
	dir, err := filepath.EvalSymlinks(r.prev)
	if err != nil {
		return nil, fmt.Errorf("rollback %s: %w", r.name, err)
	}
	d, err := (pkgfiles.Ref{Name: r.name, Dir: dir}).FilesDigest()
	if err != nil {
		return nil, fmt.Errorf("rollback %s: %w", r.name, err)
	}
	return (*FileDigest)(d), nil
}

// swap exchanges packages/<name> and packages/.previous/<name>, or moves
// the previous version in when no package is installed.
func (r *roller) swap() error {
	fail := func(err error, undo ...error) error {
		return errors.Join(append([]error{fmt.Errorf("rollback %s: %w", r.name, err)}, undo...)...)
	}
	if !r.exists {
		if err := os.Rename(r.prev, r.dest); err != nil {
			return fail(err)
		}
		return r.sync()
	}
	switch err := exchange(r.prev, r.dest); {
	case err == nil:
		r.exchanged = true
		return r.sync()
	case !errors.Is(err, errNoExchange):
		return fail(err)
	}
	stage, err := makeStage(r.home, r.name)
	if err != nil {
		return err
	}
	r.stage = stage
	r.aside = filepath.Join(r.stage, r.name)
	if err := os.Rename(r.dest, r.aside); err != nil {
		return fail(err)
	}
	if err := os.Rename(r.prev, r.dest); err != nil {
		return fail(err, os.Rename(r.aside, r.dest))
	}
	if err := os.Rename(r.aside, r.prev); err != nil {
		return fail(err, os.Rename(r.dest, r.prev), os.Rename(r.aside, r.dest))
	}
	return r.sync()
}

// sync syncs both directories a swap renamed in.
func (r *roller) sync() error {
	if err := errors.Join(syncDir(filepath.Dir(r.dest)), syncDir(filepath.Dir(r.prev))); err != nil {
		return errors.Join(fmt.Errorf("rollback %s: %w", r.name, err), r.unswap())
	}
	return nil
}

// unswap undoes a successful swap.
func (r *roller) unswap() error {
	switch {
	case !r.exists:
		return os.Rename(r.dest, r.prev)
	case r.exchanged:
		return exchange(r.prev, r.dest)
	}
	tmp := r.aside
	return errors.Join(os.Rename(r.prev, tmp), os.Rename(r.dest, r.prev), os.Rename(tmp, r.dest))
}
