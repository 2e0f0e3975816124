package builder

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// maxCacheEntry bounds one declaration cache file, in bytes: a larger
// handshake is not cached (its member is started to learn it again), and
// a larger file is not read.
const maxCacheEntry = 1 << 20

// cacheFormat is the version of a declaration cache file.
const cacheFormat = 1

// DeclCache is the declaration cache: per package, the declarations of its
// last successful handshake, keyed by a digest of everything that may
// change them (cacheKey). It holds one file per package name, so it never
// holds more entries than packages were installed; an entry whose key no
// longer matches is ignored and replaced. A zero DeclCache (no directory)
// caches nothing. Files are written atomically (a temporary file renamed);
// a file that does not parse is ignored, as if absent.
type DeclCache struct {
	// Dir is the directory holding <package>.json files.
	Dir string
}

// cacheEntry is one file of the cache.
type cacheEntry struct {
	Format       int                        `json:"format"`
	Key          string                     `json:"key"`
	Declarations *protocol.InitializeResult `json:"declarations"`
}

// cacheKey digests what decides a package's handshake declarations as far
// as the host can see: its manifest, its files and its executable (by
// content), the config, environment, limits and confinement it is started
// with, and the host identity, session and kinds it is told about. It
// returns "" when the package's files cannot be digested (nothing is then
// cached).
func cacheKey(p *pluginpkg.Package, o sidecar.Options) string {
	files, err := p.FilesDigest()
	if err != nil {
		return ""
	}
	_, exe, err := p.CommandDigest()
	if err != nil {
		return ""
	}
	data, err := json.Marshal(struct {
		Manifest, Files, Exe string
		Config               json.RawMessage
		Env                  map[string]string
		Limits               pluginpkg.ResourceLimits
		Confinement          pluginpkg.Confinement
		Host                 protocol.HostInfo
		Session              map[string]string
		Kinds                any
	}{p.ManifestSHA256, files.Sum, exe, o.Config, o.Env, o.Limits, o.Confinement, o.Host, o.Session, o.Kinds})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// load returns the cached declarations of name under key, nil when there
// are none (no cache, no file, another key, a file that does not parse).
func (c DeclCache) load(name, key string) *protocol.InitializeResult {
	if c.Dir == "" || key == "" {
		return nil
	}
	data, err := homefile.Read(c.path(name), maxCacheEntry)
	if err != nil {
		return nil
	}
	var e cacheEntry
	if json.Unmarshal(data, &e) != nil || e.Format != cacheFormat || e.Key != key || e.Declarations == nil {
		return nil
	}
	return e.Declarations
}

// store records d as name's declarations under key. It reports why it
// could not (a host that cannot write its cache starts lazy members
// without declarations to learn them again; nothing fails).
func (c DeclCache) store(name, key string, d *protocol.InitializeResult) error {
	if c.Dir == "" || key == "" || d == nil {
		return nil
	}
	data, err := json.Marshal(cacheEntry{Format: cacheFormat, Key: key, Declarations: d})
	if err != nil {
		return err
	}
	if len(data) > maxCacheEntry {
		return fmt.Errorf("declaration cache: %s: %d bytes, more than the %d a cache entry may hold", name, len(data), maxCacheEntry)
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("declaration cache: %w", err)
	}
	tmp, err := os.CreateTemp(c.Dir, "."+name+"-*")
	if err != nil {
		return fmt.Errorf("declaration cache: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("declaration cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path(name)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("declaration cache: %w", err)
	}
	return nil
}

// forget removes name's entry, if any. A file it cannot remove is left:
// its key no longer matches, or the next successful start replaces it.
func (c DeclCache) forget(name string) {
	if c.Dir != "" {
		_ = os.Remove(c.path(name))
	}
}

func (c DeclCache) path(name string) string { return filepath.Join(c.Dir, name+".json") }
