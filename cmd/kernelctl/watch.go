package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/extkernel/extkernel/pluginpkg"
)

// watchQuiet is how long the watched files must stay unchanged before
// `run --watch` reloads: an install or an editor's save is several
// events, and they make one reload.
const watchQuiet = 300 * time.Millisecond

// maxWatchedDirs bounds the directories of the packages tree that are
// watched (each takes an inotify watch).
const maxWatchedDirs = 1000

// skipDirs are directories of packages whose changes do not change what
// runs: interpreter caches and VCS metadata.
var skipDirs = map[string]bool{"__pycache__": true, "node_modules": true, ".git": true}

// ignoredPackagePath reports whether a change at rel, a path relative to
// the packages directory, is one `run --watch` does not reload for: under
// a hidden entry of packages/ (.staging and .previous, where installs
// stage and keep versions: the loader skips them, and an install ends
// with a rename into packages/ that is seen), under a directory of
// skipDirs, or an editor's swap, lock, backup or probe file (editorFile).
func ignoredPackagePath(rel string) bool {
	parts := strings.Split(rel, string(filepath.Separator))
	if strings.HasPrefix(parts[0], ".") {
		return true
	}
	for _, p := range parts {
		if skipDirs[p] {
			return true
		}
	}
	return editorFile(parts[len(parts)-1])
}

// editorFile reports whether base names a file editors write beside the
// one being edited: vim's swap files (*.swp, *.swo, *.swx) and its
// writability probe 4913, backups (*~), Emacs lock files (.#*) and
// temporary files (*.tmp). A save that replaces the edited file is still
// seen through the file's own name.
func editorFile(base string) bool {
	for _, suffix := range []string{".swp", ".swo", ".swx", "~", ".tmp"} {
		if strings.HasSuffix(base, suffix) {
			return true
		}
	}
	return strings.HasPrefix(base, ".#") || base == "4913"
}

// watcher reports changes to a home's packages, its state file and the
// config file, debounced: one batch once changes pause for watchQuiet.
//
// Lifecycle: newWatcher starts its goroutine; close stops it and waits for
// it. changes MUST NOT be read after close.
type watcher struct {
	fs      *fsnotify.Watcher
	home    string
	config  string // absolute, or "" when there is no config file
	changes chan watchBatch
	quit    chan struct{}
	done    chan struct{}
	dirs    int // watched directories of the packages tree; owned by the goroutine after start
}

// watchBatch is what changed while the files were not quiet.
type watchBatch struct {
	// home lists the changed paths of the home, relative to it, sorted.
	home []string
	// config says the config file changed.
	config bool
}

// newWatcher watches home and the config file (configPath may be empty).
func newWatcher(home, configPath string) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if home, err = filepath.Abs(home); err != nil {
		fw.Close()
		return nil, err
	}
	w := &watcher{fs: fw, home: home, changes: make(chan watchBatch), quit: make(chan struct{}), done: make(chan struct{})}
	if configPath != "" {
		if w.config, err = filepath.Abs(configPath); err == nil {
			err = fw.Add(filepath.Dir(w.config))
		}
	}
	if err == nil {
		err = fw.Add(home)
	}
	if err == nil {
		err = w.addTree(filepath.Join(home, pluginpkg.PackagesDir))
	}
	if err != nil {
		fw.Close()
		return nil, fmt.Errorf("watching %s: %w", home, err)
	}
	go w.loop()
	return w, nil
}

// addTree watches dir and its subdirectories (a missing dir is fine: the
// home watch sees it appear).
func (w *watcher) addTree(dir string) error {
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case !d.IsDir():
			return nil
		case path != dir && skipDirs[d.Name()], w.ignoredDir(path):
			return filepath.SkipDir
		case w.dirs >= maxWatchedDirs:
			return fmt.Errorf("more than %d directories under %s: not all are watched", maxWatchedDirs, dir)
		}
		w.dirs++
		return w.fs.Add(path)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// ignoredDir reports whether path, a directory under the packages
// directory, is one whose changes are ignored (ignoredPackagePath).
func (w *watcher) ignoredDir(path string) bool {
	rel, err := filepath.Rel(filepath.Join(w.home, pluginpkg.PackagesDir), path)
	return err == nil && rel != "." && !strings.HasPrefix(rel, "..") && ignoredPackagePath(rel)
}

// relevant reports whether an event is a change to what a reload reads,
// and the path to report.
func (w *watcher) relevant(e fsnotify.Event) (string, bool) {
	if e.Op == fsnotify.Chmod {
		return "", false
	}
	packages := filepath.Join(w.home, pluginpkg.PackagesDir)
	switch dir := filepath.Dir(e.Name); {
	case dir == w.home:
		base := filepath.Base(e.Name)
		return base, base == pluginpkg.StateFile || base == pluginpkg.PackagesDir
	case e.Name == packages:
		return pluginpkg.PackagesDir, true
	case isUnder(e.Name, packages):
		rel, _ := filepath.Rel(w.home, e.Name)
		inPackages, _ := filepath.Rel(packages, e.Name)
		return rel, !ignoredPackagePath(inPackages)
	}
	return "", false
}

// isUnder reports whether path is inside dir (both clean).
func isUnder(path, dir string) bool {
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// loop collects events and sends a batch once they pause.
func (w *watcher) loop() {
	defer close(w.done)
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	pending, config := map[string]bool{}, false
	for {
		select {
		case <-w.quit:
			return
		case e, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if e.Has(fsnotify.Create) && isUnder(e.Name, filepath.Join(w.home, pluginpkg.PackagesDir)) ||
				e.Name == filepath.Join(w.home, pluginpkg.PackagesDir) {
				w.addTree(e.Name) // a new package or directory: watch it too (a file is skipped)
			}
			if e.Name == w.config && e.Op != fsnotify.Chmod {
				config = true
				quiet.Reset(watchQuiet)
			} else if path, ok := w.relevant(e); ok {
				pending[path] = true
				quiet.Reset(watchQuiet)
			}
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) { // changes were lost: reload to be sure
				pending["(events lost)"] = true
				quiet.Reset(watchQuiet)
			}
		case <-quiet.C:
			batch := watchBatch{home: slices.Sorted(maps.Keys(pending)), config: config}
			clear(pending)
			config = false
			select {
			case w.changes <- batch:
			case <-w.quit:
				return
			}
		}
	}
}

// close stops watching and waits for the goroutine. It is called once.
func (w *watcher) close() {
	close(w.quit)
	w.fs.Close()
	<-w.done
}
