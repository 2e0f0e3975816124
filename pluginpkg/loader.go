package pluginpkg

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// RacyWindow is how long after its last modification a manifest is always
// read again rather than trusted from a Loader's cache, 100ms: file
// timestamps are coarse (a clock tick), so a same-size rewrite within one
// tick would otherwise go unnoticed (git's "racily clean" problem). The
// digests of package files (FilesDigest) use the same window.
const RacyWindow = pkgfiles.RacyWindow

// Loader loads a home repeatedly, as LoadInstalled does, but reuses the
// parsed manifest of every package whose plugin.json has not changed since
// a previous load (same size, modification time, change time and inode,
// and last modified more than RacyWindow before it was read). A reload of an
// unchanged home then costs one stat per manifest instead of a read and a
// parse; an unchanged packages directory, by the same rule, is stat'ed
// and not listed again. Every Loader of a process shares one cache, so a
// kernel made again in the same process (a restart, a test, a benchmark)
// reads only what changed; it holds at most maxCachedManifests manifests and
// maxCachedManifestBytes of manifest files, and is emptied when either is
// reached. A cached *Manifest is shared by every Package loaded from it:
// nothing modifies a Manifest after Parse. Its zero value is ready to use;
// it is safe for concurrent use.
type Loader struct{}

// The bounds of the process-wide manifest cache (Loader).
const (
	maxCachedManifests     = 1 << 14
	maxCachedManifestBytes = 64 << 20
)

// manifests is the process-wide cache behind every Loader.
var manifests struct {
	mu     sync.Mutex
	byPath map[string]cachedManifest // by manifest file path
	bytes  int64                     // sum of the cached files' sizes
}

type cachedManifest struct {
	stat     pkgfiles.Stat
	readAt   time.Time
	manifest *Manifest
	sha      string
	// dir and mpath are the Package.Dir and Package.ManifestPath of the
	// package it was read for (manifest.Name), which a hit hands on
	// instead of making them again.
	dir, mpath string
}

// Load reads home like LoadInstalled, reusing unchanged manifests.
func (l *Loader) Load(home string) (*Installed, error) {
	return loadInstalled(home, l)
}

// lookup returns the cached manifest for path if the file, now st, is
// unchanged.
func (l *Loader) lookup(path string, st pkgfiles.Stat) (cachedManifest, bool) {
	manifests.mu.Lock()
	c, hit := manifests.byPath[path]
	manifests.mu.Unlock()
	return c, hit && c.unchanged(st)
}

// lookupKey is lookup of the path held in key, which the map index reads
// without making a string of it.
func (l *Loader) lookupKey(key []byte, st pkgfiles.Stat) (cachedManifest, bool) {
	manifests.mu.Lock()
	c, hit := manifests.byPath[string(key)]
	manifests.mu.Unlock()
	return c, hit && c.unchanged(st)
}

// unchanged reports whether the file c was read from, now st, is
// unchanged since (and was settled when read).
func (c cachedManifest) unchanged(st pkgfiles.Stat) bool {
	return c.stat == st && st.SettledAt(c.readAt.UnixNano())
}

// packageFor returns the package name loaded from c, nil when c's
// manifest names another package: a manifest is cached only for the
// package it names, and another name for its directory (a second link to
// it) is read, and refused, again.
func (c cachedManifest) packageFor(name string) *Package {
	if c.manifest.Name != name {
		return nil
	}
	return &Package{Name: name, Dir: c.dir, ManifestPath: c.mpath, Manifest: c.manifest, ManifestSHA256: c.sha}
}

// empty reports whether the cache holds no manifest (as in a new process).
func (l *Loader) empty() bool {
	manifests.mu.Lock()
	defer manifests.mu.Unlock()
	return len(manifests.byPath) == 0
}

// store caches a manifest read (and parsed) at readAt with stat st, for
// the package at dir whose manifest messages name mpath.
func (l *Loader) store(path string, st pkgfiles.Stat, readAt time.Time, m *Manifest, sha, dir, mpath string) {
	manifests.mu.Lock()
	defer manifests.mu.Unlock()
	if old, ok := manifests.byPath[path]; ok {
		manifests.bytes -= old.stat.Size
	}
	if manifests.byPath == nil || len(manifests.byPath) >= maxCachedManifests || manifests.bytes+st.Size > maxCachedManifestBytes {
		manifests.byPath, manifests.bytes = map[string]cachedManifest{}, 0
	}
	manifests.byPath[path] = cachedManifest{stat: st, readAt: readAt, manifest: m, sha: sha, dir: dir, mpath: mpath}
	manifests.bytes += st.Size
}

// maxCachedListings bounds the listings cache: past it, it starts again
// empty.
const maxCachedListings = 64

// listings is the process-wide cache of packages directories (Loader): a
// directory's entries change only with its modification and change times,
// so an unchanged packages/ is stat'ed, not listed again.
var listings struct {
	mu    sync.Mutex
	byDir map[string]cachedListing // by the packages directory's path
}

type cachedListing struct {
	stat    pkgfiles.Stat
	readAt  time.Time
	real    string // the directory with symbolic links resolved
	entries []listedEntry
}

// listedEntry is one entry of a packages directory.
type listedEntry struct {
	name string
	dir  bool // a directory, not a symbolic link
}

// listPackages returns the entries of the packages directory dir, sorted
// by name, and dir with symbolic links resolved ("" when it has no
// entries). With a cache (a Loader's load), an unchanged directory (same
// size, times and inode, settled: RacyWindow) is not listed again. A dir
// that does not exist has no entries and no error.
func listPackages(dir string, cache *Loader) ([]listedEntry, string, error) {
	var st pkgfiles.Stat
	if cache != nil {
		var err error
		st, err = pkgfiles.StatPath(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, "", err
		}
		if err == nil {
			listings.mu.Lock()
			c, hit := listings.byDir[dir]
			listings.mu.Unlock()
			if hit && c.stat == st && st.SettledAt(c.readAt.UnixNano()) {
				return c.entries, c.real, nil
			}
		}
	}
	readAt := time.Now()
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", nil
		}
		return nil, "", err
	}
	entries := make([]listedEntry, len(des))
	for i, e := range des {
		entries[i] = listedEntry{name: e.Name(), dir: e.IsDir()}
	}
	var real string
	if len(entries) > 0 {
		real, _ = filepath.EvalSymlinks(dir)
	}
	if cache != nil && st != (pkgfiles.Stat{}) {
		listings.mu.Lock()
		if listings.byDir == nil || len(listings.byDir) >= maxCachedListings {
			listings.byDir = map[string]cachedListing{}
		}
		listings.byDir[dir] = cachedListing{stat: st, readAt: readAt, real: real, entries: entries}
		listings.mu.Unlock()
	}
	return entries, real, nil
}
