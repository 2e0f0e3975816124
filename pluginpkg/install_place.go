package pluginpkg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// errNoExchange is returned by exchangeDirs where two directories cannot
// be swapped atomically.
var errNoExchange = errors.New("directories cannot be exchanged atomically here")

// exchange is exchangeDirs; tests replace it to take the fallback path.
var exchange = exchangeDirs

// droppedName is where, in the staging directory, the version kept in
// packages/.previous goes when an upgrade replaces it.
const droppedName = ".dropped"

// previousPath is packages/.previous/<name>.
func previousPath(home, name string) string {
	return filepath.Join(home, PackagesDir, PreviousDir, name)
}

// place puts the staged package at packages/<name>. A new package is
// renamed in. For an upgrade the installed version moves to
// packages/.previous/<name>, the version kept there before into the
// staging directory (deleted with it); on Linux the new and the installed
// directories are exchanged atomically first. On failure the home is as
// it was.
func (in *installer) place() error {
	pkgs := filepath.Join(in.home, PackagesDir)
	fail := func(err error, undo ...error) error {
		return errors.Join(append([]error{fmt.Errorf("install %s: %w", in.name, err)}, undo...)...)
	}
	if !in.exists {
		if err := os.Rename(in.staged, in.dest); err != nil {
			return fail(err)
		}
		if err := syncDir(pkgs); err != nil {
			return fail(err, os.Rename(in.dest, in.staged))
		}
		in.step(StepPlaced)
		return nil
	}
	prev := previousPath(in.home, in.name)
	if err := plainDir(filepath.Dir(prev), previousWhat, true); err != nil {
		return fail(err)
	}
	if _, err := os.Lstat(prev); err == nil {
		if err := os.Rename(prev, filepath.Join(in.stage, droppedName)); err != nil {
			return fail(err)
		}
		in.dropped = true
	}
	switch err := exchange(in.staged, in.dest); {
	case err == nil:
		in.exchanged = true
		if err := os.Rename(in.staged, prev); err != nil { // staged now holds the old version
			return fail(err, exchange(in.staged, in.dest), in.restoreDropped())
		}
	case errors.Is(err, errNoExchange):
		if err := os.Rename(in.dest, prev); err != nil {
			return fail(err, in.restoreDropped())
		}
		in.step(StepMovedAside)
		if err := os.Rename(in.staged, in.dest); err != nil {
			return fail(err, os.Rename(prev, in.dest), in.restoreDropped())
		}
	default:
		return fail(err, in.restoreDropped())
	}
	if err := errors.Join(syncDir(pkgs), syncDir(filepath.Dir(prev))); err != nil {
		return fail(err, in.unplace())
	}
	in.step(StepPlaced)
	return nil
}

// restoreDropped moves the version dropped from packages/.previous back.
func (in *installer) restoreDropped() error {
	if !in.dropped {
		return nil
	}
	in.dropped = false
	return os.Rename(filepath.Join(in.stage, droppedName), previousPath(in.home, in.name))
}

// unplace undoes a successful place: the installed version and the one
// kept before it go back where they were, the new one into the staging
// directory.
func (in *installer) unplace() error {
	if !in.exists {
		return os.Rename(in.dest, in.staged)
	}
	prev := previousPath(in.home, in.name)
	if in.exchanged {
		if err := exchange(prev, in.dest); err != nil {
			return err
		}
		return errors.Join(os.Rename(prev, in.staged), in.restoreDropped())
	}
	if err := os.Rename(in.dest, in.staged); err != nil {
		return err
	}
	return errors.Join(os.Rename(prev, in.dest), in.restoreDropped())
}
