package pkgfiles

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// CopyFiles copies the package's files into dst, an empty directory, and
// returns the digest of the copy: the FileDigest of what it copied, read
// once, so the copy holds exactly the content the digest covers, whatever
// happens to the package directory meanwhile. It walks as FilesDigest does,
// with the same skips and bounds:
//
//   - a directory is made with mode 0700 (empty ones too, and the plugin
//     may write in them: Python's __pycache__);
//   - a regular file is written with mode 0500 when any execute bit is set,
//     0400 otherwise: read-only, and what the digest records of its mode;
//   - a symbolic link is made with its target as written (which the digest
//     covers), so a relative link inside the package points inside the
//     copy. A relative link leaving the package gets, instead, the package
//     directory of its parent joined with its target, unresolved, so that
//     it resolves to what it did in the package (not to a neighbour of the
//     copy); an absolute link is kept. What a link leaving the package
//     points to is not covered, in the copy as in the digest.
//
// A file is read and hashed as it is copied, unless the digest cache
// trusts its version and versions carry the change time (Linux): then the
// system copies it, and its cached digest stands for the copy if its
// version is still the same after the copy (the file is hashed as it is
// copied again if not). Errors are those of FilesDigest, or of writing the
// copy; on error dst holds part of the copy, which the caller removes.
func (r Ref) CopyFiles(dst string) (*FileDigest, error) {
	return fileDigests.files(r.Name, r.Dir, dst)
}

// copyDir makes the directory rel of the copy, if copying.
func (w *digestWalk) copyDir(rel string) error {
	if w.copyTo == "" {
		return nil
	}
	if err := os.Mkdir(filepath.Join(w.copyTo, filepath.FromSlash(rel)), 0o700); err != nil {
		return fmt.Errorf("package %q: copy: %w", w.name, err)
	}
	return nil
}

// copyLink makes the symbolic link rel of the copy, if copying, from the
// package's link's target (see CopyFiles).
func (w *digestWalk) copyLink(rel, target string) error {
	if w.copyTo == "" {
		return nil
	}
	if !filepath.IsAbs(target) {
		if in := path.Join(path.Dir(rel), filepath.ToSlash(target)); in == ".." || strings.HasPrefix(in, "../") {
			target = filepath.Join(w.dir, filepath.FromSlash(path.Dir(rel))) + string(filepath.Separator) + target
		}
	}
	return os.Symlink(target, filepath.Join(w.copyTo, filepath.FromSlash(rel)))
}

// copyFile copies the regular file at file to rel in the copy, read-only
// (executable when exec), reading at most limit bytes, and returns the
// sha256 of what it copied.
func (w *digestWalk) copyFile(file, rel string, exec bool, limit int64) (sum [sha256.Size]byte, err error) {
	mode := os.FileMode(0o400)
	if exec {
		mode = 0o500
	}
	out, err := os.OpenFile(filepath.Join(w.copyTo, filepath.FromSlash(rel)), os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return sum, fmt.Errorf("copy: %w", err)
	}
	sum, err = w.cache.copy(file, limit, out)
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("copy: %w", cerr)
	}
	return sum, err
}
