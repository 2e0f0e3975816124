package pkgfiles

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/extkernel/extkernel/internal/homefile"
)

// maxCachedDigests bounds the process-wide file digest cache. When it is
// full the cache is emptied and fills again: a bound, not an eviction
// policy, since one home rarely holds that many files.
const maxCachedDigests = 1 << 16

// RacyWindow is how long after its last modification a file version is
// always read again rather than trusted from a cache: file timestamps are
// coarse (a clock tick), so a same-size rewrite within one tick would
// otherwise go unnoticed (git's "racily clean" problem).
const RacyWindow = 100 * time.Millisecond

// Stat identifies one version of a file: its size, modification time
// and, where the platform gives them (stat_linux.go), its change time and
// inode. Two equal Stats of one path are taken to be the same content,
// unless recorded within RacyWindow of the modification.
type Stat struct {
	// Size and Mtime (in Unix nanoseconds) are set on every platform;
	// Ctime (Unix nanoseconds) and Ino only on Linux.
	Size, Mtime, Ctime int64
	Ino                uint64
}

// fileDigests is the process-wide cache behind Ref.FilesDigest and
// Ref.CommandDigest, shared by the kernel's fingerprints and the sidecar's
// pin check, so a plan, a reload or a crash restart reads only the files
// that changed.
var fileDigests digestCache

// digestCache remembers the content sha256 of files by path and version
// (size, modification time and, on Linux, change time and inode), so an
// unchanged file is stat'ed but not read again. A version read within
// RacyWindow of its last modification or change is read again next time:
// timestamps are coarse, so a same-size rewrite in the same tick would
// otherwise go unnoticed. Its zero value is ready to use; it is safe for
// concurrent use and holds no lock while it reads a file.
type digestCache struct {
	mu      sync.Mutex
	entries map[string]cachedDigest // by path; guarded by mu

	now   func() time.Time // nil means time.Now; tests move the clock
	reads atomic.Int64     // files whose content was read (a test hook)
}

type cachedDigest struct {
	stat   Stat
	readAt int64 // unix ns
	sum    [sha256.Size]byte
}

func (c *digestCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// sum returns the sha256 of the regular file at path, whose stat (or lstat,
// for a file that is not a symbolic link) is fi. It reads the file only
// when the cache has no trusted entry for fi's version, and then at most
// limit bytes: a longer file is an error naming path.
func (c *digestCache) sum(path string, fi os.FileInfo, limit int64) ([sha256.Size]byte, error) {
	st := StatOf(fi)
	c.mu.Lock()
	e, hit := c.entries[path]
	c.mu.Unlock()
	if hit && e.stat == st && e.readAt-max(st.Mtime, st.Ctime) >= int64(RacyWindow) {
		return e.sum, nil
	}
	return c.read(path, limit)
}

// read hashes the file at path and caches the sum under the version the
// opened file had before and after the read (none when it changed).
func (c *digestCache) read(path string, limit int64) (sum [sha256.Size]byte, err error) {
	f, fi, err := homefile.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	c.reads.Add(1)
	readAt := c.clock().UnixNano()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, limit+1))
	if err != nil {
		return sum, fmt.Errorf("hash %s: %w", path, err)
	}
	if n > limit {
		return sum, fmt.Errorf("hash %s: %w (%s)", path, ErrPackageTooLarge, homefile.Size(limit))
	}
	h.Sum(sum[:0])
	after, err := f.Stat()
	if st := StatOf(fi); err == nil && StatOf(after) == st {
		c.store(path, cachedDigest{stat: st, readAt: readAt, sum: sum})
	}
	return sum, nil
}

func (c *digestCache) store(path string, e cachedDigest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedDigests {
		c.entries = map[string]cachedDigest{}
	}
	c.entries[path] = e
}
