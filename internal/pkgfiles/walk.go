package pkgfiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// maxCachedDirs bounds the directory listing cache, as maxCachedDigests
// bounds the digest cache.
const maxCachedDirs = 1 << 14

// dirListings remembers the entries of the directories the digest walks
// read, by path and version, so that a walk of an unchanged package lists
// a directory with one lstat instead of an open, two getdents and a close
// (a home of 64 packages fingerprints them at every build and plan). A
// directory's entries change only with its modification and change times;
// a version is trusted only where versions carry the change time (Linux)
// and when listed at least RacyWindow after its last change, as digests
// are. Safe for concurrent use.
type dirListings struct {
	mu      sync.Mutex
	entries map[string]cachedListing
}

type cachedListing struct {
	stat     Stat
	listedAt int64 // unix ns
	entries  []fs.DirEntry
}

// read returns the entries of the directory dir, whose lstat is fi, sorted
// by name as os.ReadDir sorts them. The entries are shared: callers MUST
// NOT modify the slice. An entry's Info is taken when called (os.ReadDir's
// entries lstat then), so a cached listing never serves a stale file
// version.
func (d *dirListings) read(c *digestCache, dir string, fi fs.FileInfo) ([]fs.DirEntry, error) {
	st := StatOf(fi)
	if st.Ctime != 0 {
		d.mu.Lock()
		e, hit := d.entries[dir]
		d.mu.Unlock()
		if hit && e.stat == st && st.SettledAt(e.listedAt) {
			return e.entries, nil
		}
	}
	listedAt := c.clock().UnixNano()
	entries, err := os.ReadDir(dir)
	if err != nil || st.Ctime == 0 {
		return entries, err
	}
	if after, err := os.Lstat(dir); err != nil || StatOf(after) != st {
		return entries, nil // changed while listed: not cached
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.entries == nil || len(d.entries) >= maxCachedDirs {
		d.entries = map[string]cachedListing{}
	}
	d.entries[dir] = cachedListing{stat: st, listedAt: listedAt, entries: entries}
	return entries, nil
}

// walkDir is filepath.WalkDir (lexical order, symbolic links never
// followed, fs.SkipDir and fs.SkipAll as it treats them) listing each
// directory through the listing cache; saw is given the lstat of root and
// of each directory listed.
func (c *digestCache) walkDir(root string, fn fs.WalkDirFunc, saw func(string, fs.FileInfo)) error {
	info, err := os.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		saw(root, info)
		err = c.walk(root, fs.FileInfoToDirEntry(info), info, fn, saw)
	}
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

// walk visits path (entry d, lstat fi when d is a directory reached by
// walkDir itself, else nil) and, for a directory, what it holds.
func (c *digestCache) walk(path string, d fs.DirEntry, fi fs.FileInfo, fn fs.WalkDirFunc, saw func(string, fs.FileInfo)) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if errors.Is(err, filepath.SkipDir) && d.IsDir() {
			err = nil // skipped the directory
		}
		return err
	}
	if fi == nil {
		var err error
		if fi, err = os.Lstat(path); err != nil {
			return fn(path, d, err)
		}
		saw(path, fi)
	}
	entries, err := c.dirs.read(c, path, fi)
	if err != nil {
		// Second call, to report the ReadDir error, as WalkDir does.
		if err = fn(path, d, err); err != nil {
			if errors.Is(err, filepath.SkipDir) && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	for _, e := range entries {
		if err := c.walk(filepath.Join(path, e.Name()), e, nil, fn, saw); err != nil {
			if errors.Is(err, filepath.SkipDir) {
				break
			}
			return err
		}
	}
	return nil
}
