package pluginpkg

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/internal/homefile"
)

// createFile is os.OpenFile; tests replace it to fail as a full disk does.
var createFile = os.OpenFile

// extract writes the checked package into dst, which must not exist (its
// parent must): directories 0755, regular files 0644 or, with any execute
// bit in the source, 0755, and symbolic links last, as written. The source
// is read a second time; an entry that differs from what the first pass
// checked is a RuleFormat *SourceError. Files are synced as they are
// written; syncTree syncs the directories.
func (s *source) extract(dst string) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	for _, d := range append([]string{""}, s.dirs...) {
		p := filepath.Join(dst, filepath.FromSlash(d))
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
		if err := os.Chmod(p, 0o755); err != nil { // not subject to the umask
			return err
		}
	}
	var err error
	switch s.kind {
	case SourceDir:
		err = s.copyFiles(dst)
	case SourceTarGz:
		err = s.extractTarGz(dst)
	case SourceZip:
		err = s.extractZip(dst)
	}
	if err != nil {
		return err
	}
	for _, e := range s.entries {
		if e.kind == kindLink {
			if err := os.Symlink(filepath.FromSlash(e.target), filepath.Join(dst, filepath.FromSlash(e.path))); err != nil {
				return err
			}
		}
	}
	return nil
}

// changed is the error of an entry that differs in the second pass.
func (s *source) changed(raw string) error {
	return s.refuse(raw, RuleFormat, "the entry changed while the package was installed")
}

// files counts the regular files to write.
func (s *source) files() int {
	n := 0
	for _, e := range s.entries {
		if e.kind == kindFile {
			n++
		}
	}
	return n
}

// writeEntry writes file e under dst from r, which must hold exactly
// e.size bytes, and syncs it.
func (s *source) writeEntry(dst string, e *entry, r io.Reader) error {
	perm := fs.FileMode(0o644)
	if e.exec {
		perm = 0o755
	}
	out, err := createFile(filepath.Join(dst, filepath.FromSlash(e.path)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(r, e.size+1))
	if err == nil && n != e.size {
		err = s.changed(e.raw)
	}
	if err == nil {
		err = out.Chmod(perm)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// copyFiles copies a directory source's files, each still the regular
// file the first pass saw at its path.
func (s *source) copyFiles(dst string) error {
	for _, e := range s.entries {
		if e.kind != kindFile {
			continue
		}
		if err := s.copyFile(dst, e); err != nil {
			return err
		}
	}
	return nil
}

func (s *source) copyFile(dst string, e *entry) error {
	p := filepath.Join(s.abs, filepath.FromSlash(e.raw))
	before, err := os.Lstat(p)
	if err != nil {
		return err
	}
	f, fi, err := homefile.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if !os.SameFile(before, fi) || fi.Size() != e.size {
		return s.changed(e.raw)
	}
	return s.writeEntry(dst, e, f)
}

// pathOf returns where the raw name of the second pass lands in the
// package ("" for the root, a stripped directory or a skipped entry).
func (s *source) pathOf(raw string) (string, error) {
	clean, err := s.cleanName(raw)
	if err != nil {
		return "", err
	}
	if s.prefix != "" {
		if clean == strings.TrimSuffix(s.prefix, "/") {
			return "", nil
		}
		clean = strings.TrimPrefix(clean, s.prefix)
	}
	return clean, nil
}

// second matches an entry of the second pass with the first: it returns
// the entry to write (nil to pass over) or the error.
func (s *source) second(raw string, got *entry) (*entry, error) {
	p, err := s.pathOf(raw)
	if err != nil {
		return nil, err
	}
	if p == "" {
		return nil, nil
	}
	e := s.byPath[p]
	switch {
	case e == nil && skippedPath(p, got.kind == kindDir):
		return nil, nil
	case e == nil || e.kind != got.kind || e.kind == kindFile && e.size != got.size:
		return nil, s.changed(raw)
	case e.kind == kindLink && got.target != "-" && got.target != e.target:
		return nil, s.changed(raw)
	}
	return e, nil
}

func (s *source) extractTarGz(dst string) error {
	f, _, err := homefile.Open(s.abs)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return s.changed("")
	}
	defer gz.Close()
	tr, written := tar.NewReader(gz), 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return &SourceError{Source: s.given, Rule: RuleFormat, Detail: "not a readable tar archive", Err: err}
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		got, err := s.tarEntry(h)
		if err != nil {
			return err
		}
		e, err := s.second(h.Name, got)
		if err != nil || e == nil || e.kind != kindFile {
			if err != nil {
				return err
			}
			continue
		}
		if err := s.writeEntry(dst, e, tr); err != nil {
			return err
		}
		written++
	}
	if written != s.files() {
		return s.changed("")
	}
	return nil
}

func (s *source) extractZip(dst string) error {
	f, fi, err := homefile.Open(s.abs)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := zip.NewReader(f, fi.Size())
	if err != nil && zr == nil {
		return s.changed("")
	}
	written := 0
	for _, zf := range zr.File {
		got, err := s.zipEntry(zf, s.lim)
		if err != nil {
			return s.changed(zf.Name)
		}
		e, err := s.second(zf.Name, got)
		if err != nil || e == nil || e.kind != kindFile {
			if err != nil {
				return err
			}
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("entry %q: %w", zf.Name, err)
		}
		err = s.writeEntry(dst, e, rc)
		rc.Close()
		if err != nil {
			return err
		}
		written++
	}
	if written != s.files() {
		return s.changed("")
	}
	return nil
}

// syncTree syncs every directory of an extracted package, deepest first,
// so that after a crash a renamed-in package is whole.
func (s *source) syncTree(dst string) error {
	dirs := slices.Clone(s.dirs)
	slices.Reverse(dirs)
	for _, d := range append(dirs, "") {
		if err := syncDir(filepath.Join(dst, filepath.FromSlash(d))); err != nil {
			return err
		}
	}
	return nil
}
