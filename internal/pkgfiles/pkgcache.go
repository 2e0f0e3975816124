package pkgfiles

import (
	"maps"
	"os"
	"sync"
)

// maxCachedStats bounds the package digest cache by the stats it holds
// (one per directory and file of each package): when a package would take
// it past the bound, the cache is emptied and fills again, as the digest
// cache is.
const maxCachedStats = 1 << 16

// packageDigests remembers each package directory's last FileDigest with
// the stat of everything its walk looked at (the package directory, each
// directory walked, each file), so that the digest of an unchanged package
// is one lstat per directory and file, compared, instead of a walk that
// joins, cleans and hashes every path again (a host of 64 packages
// fingerprints them at every build and plan). A directory's stat covers
// its entries (adding, removing, renaming or replacing one, symbolic links
// included, changes its modification and change times), a file's stat its
// content. It is trusted only where stats carry the change time and inode
// (Linux), and only when every stat it holds was taken at least
// RacyWindow after that file's last modification or change, as the
// digest cache trusts a file. Safe for concurrent use.
type packageDigests struct {
	mu      sync.Mutex
	entries map[string]cachedPackage // by package directory; guarded by mu
	stats   int                      // stats held by entries; guarded by mu
}

type cachedPackage struct {
	seen   []seenStat
	digest *FileDigest // shared: lookup returns a copy
}

// seenStat is one lstat a digest walk took.
type seenStat struct {
	path string
	stat Stat
}

// lookup returns the digest of the package directory dir if the cache
// holds one and every path its walk looked at has the same stat now: a
// copy, whose Files map the caller may change.
func (p *packageDigests) lookup(dir string) (*FileDigest, bool) {
	p.mu.Lock()
	e, ok := p.entries[dir]
	p.mu.Unlock()
	if !ok {
		return nil, false
	}
	for _, s := range e.seen {
		fi, err := os.Lstat(s.path)
		if err != nil || StatOf(fi) != s.stat {
			return nil, false
		}
	}
	return &FileDigest{Sum: e.digest.Sum, Files: maps.Clone(e.digest.Files)}, true
}

// store records d as the digest of dir, walked from walkedAt (unix ns)
// with the stats seen, unless one of them is not to be trusted: no change
// time (another platform), or a modification or change within RacyWindow
// of the walk.
func (p *packageDigests) store(dir string, seen []seenStat, walkedAt int64, d *FileDigest) {
	for _, s := range seen {
		if s.stat.Ctime == 0 || !s.stat.SettledAt(walkedAt) {
			return
		}
	}
	if len(seen) > maxCachedStats {
		return
	}
	e := cachedPackage{seen: seen, digest: &FileDigest{Sum: d.Sum, Files: maps.Clone(d.Files)}}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.entries[dir]; ok {
		p.stats -= len(old.seen)
	}
	if p.entries == nil || p.stats+len(seen) > maxCachedStats {
		p.entries, p.stats = map[string]cachedPackage{}, 0
	}
	p.entries[dir] = e
	p.stats += len(seen)
}
