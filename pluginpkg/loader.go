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
// the previous load (same size, modification time, change time and inode,
// and last modified more than RacyWindow before it was read). A reload of an
// unchanged home then costs one stat per manifest instead of a read and a
// parse. Its zero value is ready to use; it is safe for concurrent use.
type Loader struct {
	mu    sync.Mutex
	cache map[string]cachedManifest // by manifest file path
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
	l.mu.Lock()
	defer l.mu.Unlock()
	c, hit := l.cache[path]
	if !hit || c.stat != st || c.readAt.Sub(fi.ModTime()) < RacyWindow {
		return nil, "", st, false
	}
	return c.manifest, c.sha, st, true
}

// store caches a manifest read (and parsed) at readAt with stat st.
func (l *Loader) store(path string, st pkgfiles.Stat, readAt time.Time, m *Manifest, sha string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cache == nil {
		l.cache = map[string]cachedManifest{}
	}
	l.cache[path] = cachedManifest{stat: st, readAt: readAt, manifest: m, sha: sha}
}
