package pkgfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/extkernel/extkernel/internal/homefile"
)

// Bounds of a package's files (docs/manifest.md, "Package files"). A package
// over either bound cannot be digested: FilesDigest returns an error
// wrapping ErrPackageTooLarge.
const (
	// MaxPackageFiles is the most files (regular files and symbolic links,
	// interpreter caches excluded) a package may hold: 10000.
	MaxPackageFiles = 10000
	// MaxPackageBytes is the most bytes its regular files may hold in
	// total, 256 MiB; it also bounds the command hashed by CommandDigest.
	MaxPackageBytes = 256 << 20
)

var (
	// ErrPackageTooLarge is wrapped by the error of FilesDigest when a
	// package holds more than MaxPackageFiles files or MaxPackageBytes
	// bytes, and of CommandDigest when the command is larger than
	// MaxPackageBytes.
	ErrPackageTooLarge = errors.New("package too large to digest")
	// ErrIrregularFile is wrapped by the error of FilesDigest when a
	// package holds a FIFO, socket or device: such a file has no content to
	// digest and reading it could block. The message names the file.
	ErrIrregularFile = errors.New("not a regular file, directory or symbolic link")
)

// FileDigest is the digest of a package's own files: every regular file by
// its path relative to the package directory, whether it is executable and
// its content; every symbolic link by its target as written (never
// followed). Directories count only through what they hold. Interpreter
// caches and version-control metadata are skipped: directories named
// __pycache__, .git, .hg or .svn, files ending in .pyc and the directory
// node_modules/.cache (at any depth); a `git status` in a package directory
// is not a change. The manifest is one of the files.
type FileDigest struct {
	// Sum is the lower-case hex sha256 over every entry in path order.
	Sum string
	// Files maps each file's slash-separated path, relative to the package
	// directory, to the first 16 hex digits of its entry's sha256: enough
	// to name what changed between two digests.
	Files map[string]string
}

// FilesDigest digests the package's files (see FileDigest). A file whose
// size, modification time, change time and inode are those it had when it
// was last hashed by this process is not read again. The error names the
// package and, for a FIFO, socket or device (ErrIrregularFile), the file;
// over MaxPackageFiles files or MaxPackageBytes bytes it wraps
// ErrPackageTooLarge.
func (r Ref) FilesDigest() (*FileDigest, error) {
	return fileDigests.files(r.Name, r.Dir, "")
}

// CommandDigest resolves the command as CommandPath does (a bare name is
// looked up on this process's PATH) and returns the path and the
// lower-case hex sha256 of the file it resolves to, cached as FilesDigest
// caches files. Two lookups that lead to files with the same content give
// the same sum, wherever they are.
func (r Ref) CommandDigest() (path, sum string, err error) {
	path, fi, ok := r.plainCommand()
	if !ok {
		if path, err = r.CommandPath(); err != nil {
			return "", "", err
		}
		if fi, err = os.Stat(path); err != nil {
			return "", "", fmt.Errorf("package %q: %w", r.Name, err)
		}
	}
	s, err := fileDigests.sum(path, fi, MaxPackageBytes)
	if err != nil {
		return "", "", fmt.Errorf("package %q: command: %w", r.Name, err)
	}
	return path, hex.EncodeToString(s[:]), nil
}

// skipped reports whether the walk leaves out rel (slash-separated): the
// interpreter caches and version-control directories FileDigest documents.
func skipped(rel string, e fs.DirEntry) bool { return Skipped(rel, e.IsDir()) }

// files walks dir and digests what FileDigest describes, in path order.
// With copyTo set, it copies what it digests there (see CopyFiles).
// Without copyTo, an unchanged package's digest comes from the package
// cache (packageDigests).
func (c *digestCache) files(name, dir, copyTo string) (*FileDigest, error) {
	if copyTo == "" {
		if d, ok := c.pkgs.lookup(dir); ok {
			return d, nil
		}
	}
	c.walks.Add(1)
	walkedAt := c.clock().UnixNano()
	w := &digestWalk{cache: c, name: name, dir: dir, copyTo: copyTo, sum: sha256.New(), out: &FileDigest{Files: map[string]string{}}}
	if err := c.walkDir(dir, w.visit, w.saw); err != nil {
		return nil, err
	}
	w.out.Sum = hex.EncodeToString(w.sum.Sum(nil))
	if copyTo == "" {
		c.pkgs.store(dir, w.seen, walkedAt, w.out)
	}
	return w.out, nil
}

// saw records the lstat the walk took of path, for the package cache.
func (w *digestWalk) saw(path string, fi os.FileInfo) {
	w.seen = append(w.seen, seenStat{path: path, stat: StatOf(fi)})
}

// digestWalk is the state of one FilesDigest.
type digestWalk struct {
	cache  *digestCache
	name   string // package name, for messages
	dir    string
	copyTo string // where CopyFiles copies the files, or ""
	sum    hash.Hash
	out    *FileDigest
	count  int
	bytes  int64
	seen   []seenStat // every lstat taken, for the package cache
}

// visit digests one entry. WalkDir visits in lexical order and never
// follows symbolic links.
func (w *digestWalk) visit(file string, e fs.DirEntry, err error) error {
	if err != nil {
		return fmt.Errorf("package %q: %w", w.name, err)
	}
	if file == w.dir {
		return nil
	}
	rel, err := filepath.Rel(w.dir, file)
	if err != nil {
		return fmt.Errorf("package %q: %w", w.name, err)
	}
	rel = filepath.ToSlash(rel)
	if skipped(rel, e) {
		if e.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if e.IsDir() {
		return w.copyDir(rel)
	}
	if w.count++; w.count > MaxPackageFiles {
		return fmt.Errorf("package %q: more than %d files under %s: %w", w.name, MaxPackageFiles, w.dir, ErrPackageTooLarge)
	}
	entry, err := w.entry(file, rel, e)
	if err != nil {
		return err
	}
	h := sha256.Sum256([]byte(entry))
	io.WriteString(w.sum, rel)
	w.sum.Write([]byte{0})
	w.sum.Write(h[:])
	w.out.Files[rel] = hex.EncodeToString(h[:8])
	return nil
}

// entry describes one file for the digest: "l <target>" for a symbolic
// link, "f<x> <content sha256>" for a regular file, where <x> is "x" when
// any execute bit is set and "-" otherwise. Copying, it describes the
// copy it makes.
func (w *digestWalk) entry(file, rel string, e fs.DirEntry) (string, error) {
	if e.Type()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(file)
		if err == nil {
			err = w.copyLink(rel, target)
		}
		if err != nil {
			return "", fmt.Errorf("package %q: %w", w.name, err)
		}
		return "l " + target, nil
	}
	fi, err := e.Info()
	if err != nil {
		return "", fmt.Errorf("package %q: %w", w.name, err)
	}
	w.saw(file, fi)
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("package %q: %s is %s: %w", w.name, file, homefile.TypeName(fi.Mode()), ErrIrregularFile)
	}
	w.bytes += fi.Size()
	if w.bytes > MaxPackageBytes {
		return "", fmt.Errorf("package %q: files under %s hold more than %s: %w", w.name, w.dir, homefile.Size(MaxPackageBytes), ErrPackageTooLarge)
	}
	exec := fi.Mode()&0o111 != 0
	limit := MaxPackageBytes - (w.bytes - fi.Size())
	var sum [sha256.Size]byte
	if w.copyTo == "" {
		sum, err = w.cache.sum(file, fi, limit)
	} else {
		sum, err = w.copyFile(file, rel, exec, limit)
	}
	if err != nil {
		return "", fmt.Errorf("package %q: %w", w.name, err)
	}
	x := "-"
	if exec {
		x = "x"
	}
	return "f" + x + " " + hex.EncodeToString(sum[:]), nil
}

// ChangedFiles returns, sorted, the files whose digests differ between two
// file-digest maps (path -> digest): changed, added or removed. It is nil
// when none differs.
func ChangedFiles(a, b map[string]string) []string {
	var changed []string
	for f, d := range b {
		if a[f] != d {
			changed = append(changed, f)
		}
	}
	for f := range a {
		if _, ok := b[f]; !ok {
			changed = append(changed, f)
		}
	}
	slices.Sort(changed)
	return changed
}
