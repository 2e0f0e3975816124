package pluginpkg

import (
	"os"
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
// parse. Every Loader of a process shares one cache, so a kernel made again
// in the same process (a restart, a test, a benchmark) reads only what
// changed; it holds at most maxCachedManifests manifests and
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
}

// Load reads home like LoadInstalled, reusing unchanged manifests.
func (l *Loader) Load(home string) (*Installed, error) {
	return loadInstalled(home, l)
}

// lookup returns the cached manifest for path if the file is unchanged.
func (l *Loader) lookup(path string) (m *Manifest, sha string, st pkgfiles.Stat, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, "", pkgfiles.Stat{}, false
	}
	st = pkgfiles.StatOf(fi)
	manifests.mu.Lock()
	defer manifests.mu.Unlock()
	c, hit := manifests.byPath[path]
	if !hit || c.stat != st || !st.SettledAt(c.readAt.UnixNano()) {
		return nil, "", st, false
	}
	return c.manifest, c.sha, st, true
}

// store caches a manifest read (and parsed) at readAt with stat st.
func (l *Loader) store(path string, st pkgfiles.Stat, readAt time.Time, m *Manifest, sha string) {
	manifests.mu.Lock()
	defer manifests.mu.Unlock()
	if old, ok := manifests.byPath[path]; ok {
		manifests.bytes -= old.stat.Size
	}
	if manifests.byPath == nil || len(manifests.byPath) >= maxCachedManifests || manifests.bytes+st.Size > maxCachedManifestBytes {
		manifests.byPath, manifests.bytes = map[string]cachedManifest{}, 0
	}
	manifests.byPath[path] = cachedManifest{stat: st, readAt: readAt, manifest: m, sha: sha}
	manifests.bytes += st.Size
}
