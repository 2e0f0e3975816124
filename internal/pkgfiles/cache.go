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

// StatPath returns the version (Stat) of the file at path, following
// symbolic links as os.Stat does; the zero Stat with the error when it
// cannot be stat'ed.
func StatPath(path string) (Stat, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Stat{}, err
	}
	return StatOf(fi), nil
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
	dirs    dirListings             // the walks' directory listings (walk.go)
	pkgs    packageDigests          // the packages' last digests (pkgcache.go)

	now    func() time.Time // nil means time.Now; tests move the clock
	reads  atomic.Int64     // files whose content was read (a test hook)
	walks  atomic.Int64     // package directories walked, not taken from pkgs (a test hook)
	copied func(string)     // nil, or (tests) run with the path after the system copied a file
}

// SettledAt reports whether the version st, recorded (read, listed,
// walked) at the unix-nanosecond time at, can be trusted from a cache: at
// least RacyWindow after its last modification or change. Every cache of
// file versions in the module decides with it.
func (s Stat) SettledAt(at int64) bool {
	return at-max(s.Mtime, s.Ctime) >= int64(RacyWindow)
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
	if sum, ok := c.lookup(path, StatOf(fi)); ok {
		return sum, nil
	}
	return c.read(path, limit, nil)
}

// sumOpen is sum of the open file f, cached under f.Name() by the version
// of f itself (its fstat), at most MaxPackageBytes (CachedFileSHA256).
func (c *digestCache) sumOpen(f *os.File) (sum [sha256.Size]byte, err error) {
	fi, err := f.Stat()
	if err != nil {
		return sum, err
	}
	if !fi.Mode().IsRegular() {
		return sum, fmt.Errorf("%s is %s: %w", f.Name(), homefile.TypeName(fi.Mode()), ErrIrregularFile)
	}
	if sum, ok := c.lookup(f.Name(), StatOf(fi)); ok {
		return sum, nil
	}
	return c.readOpen(f, f.Name(), fi, MaxPackageBytes, nil)
}

// lookup returns the cached sum of path at version st, if the cache has
// one it trusts: recorded at least RacyWindow after the version's last
// modification or change.
func (c *digestCache) lookup(path string, st Stat) (sum [sha256.Size]byte, ok bool) {
	c.mu.Lock()
	e, hit := c.entries[path]
	c.mu.Unlock()
	if hit && e.stat == st && st.SettledAt(e.readAt) {
		return e.sum, true
	}
	return sum, false
}

// read hashes the file at path, writing what it hashes to w as well
// unless w is nil, and caches the sum under the version the opened file
// had before and after the read (none when it changed).
func (c *digestCache) read(path string, limit int64, w io.Writer) (sum [sha256.Size]byte, err error) {
	f, fi, err := homefile.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	return c.readOpen(f, path, fi, limit, w)
}

// copy copies the regular file at path (at most limit bytes) to out, an
// empty file open for reading and writing, and returns the sha256 of what
// it copied. When the file's version is one the cache trusts, and versions
// carry the change time (Linux: a rewrite cannot hide from it), the
// system copies the bytes (copy_file_range, or a reflink) without this
// process reading them, and the cached sum is what was copied provided
// the version is the same after the copy. Otherwise, or when it changed
// meanwhile, the file is read and hashed as it is copied (again).
func (c *digestCache) copy(path string, limit int64, out *os.File) (sum [sha256.Size]byte, err error) {
	f, fi, err := homefile.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	st := StatOf(fi)
	if cached, ok := c.lookup(path, st); ok && st.Ctime != 0 && st.Size <= limit {
		n, err := io.Copy(out, io.LimitReader(f, st.Size+1))
		if err != nil {
			return sum, fmt.Errorf("copy %s: %w", path, err)
		}
		if c.copied != nil {
			c.copied(path)
		}
		if after, err := f.Stat(); err == nil && n == st.Size && StatOf(after) == st {
			return cached, nil
		}
		if err := out.Truncate(0); err != nil {
			return sum, fmt.Errorf("copy %s: %w", path, err)
		}
		if _, err := out.Seek(0, io.SeekStart); err != nil {
			return sum, fmt.Errorf("copy %s: %w", path, err)
		}
		if fi, err = f.Stat(); err != nil {
			return sum, fmt.Errorf("copy %s: %w", path, err)
		}
	}
	return c.readOpen(f, path, fi, limit, out)
}

// readOpen is read of the open file f, from its start (with ReadAt: f's
// offset is left alone); fi is f's stat taken before the read.
func (c *digestCache) readOpen(f *os.File, path string, fi os.FileInfo, limit int64, w io.Writer) (sum [sha256.Size]byte, err error) {
	c.reads.Add(1)
	readAt := c.clock().UnixNano()
	h := sha256.New()
	var dst io.Writer = h
	if w != nil {
		dst = io.MultiWriter(h, w)
	}
	n, err := io.Copy(dst, io.NewSectionReader(f, 0, limit+1))
	if err != nil {
		return sum, fmt.Errorf("hash %s: %w", path, err)
	}
	if n > limit {
		return sum, fmt.Errorf("hash %s: %w (%s)", path, ErrPackageTooLarge, homefile.Size(limit))
	}
	h.Sum(sum[:0])
	if after, err := f.Stat(); err == nil && StatOf(after) == StatOf(fi) {
		c.store(path, cachedDigest{stat: StatOf(fi), readAt: readAt, sum: sum})
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
