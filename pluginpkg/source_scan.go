package pluginpkg

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// scan collects a source's entries in a first pass, checking each bound as
// it goes, so that a hostile source is refused after reading at most a
// bound's worth of it.
type scan struct {
	s   *source
	lim Limits
	// entries are in source order, paths cleaned (not yet stripped).
	entries []*entry
	seen    map[string]bool
	total   int64
	// unpacked counts the content bytes read; compressed, when set,
	// returns the archive bytes read so far (the whole-stream ratio).
	unpacked   int64
	compressed func() int64
	// manifests holds the first MaxManifestSize+1 bytes of "plugin.json"
	// and of the first "<top>/plugin.json", by cleaned path; top is that
	// first top-level directory holding one ("" before it is seen).
	manifests map[string][]byte
	top       string
}

func newScan(s *source, lim Limits) *scan {
	return &scan{s: s, lim: lim, seen: map[string]bool{}, manifests: map[string][]byte{}}
}

// add checks e's name, the entry count and e's claimed size, and records
// it. The root directory entry ("./") is dropped.
func (sc *scan) add(e *entry) error {
	clean, err := sc.s.cleanName(e.raw)
	if err != nil {
		return err
	}
	if clean == "" {
		if e.kind != kindDir {
			return sc.s.refuse(e.raw, RulePath, "the name is empty once cleaned")
		}
		return nil
	}
	e.path = clean
	if len(sc.entries) >= sc.lim.Entries {
		return sc.s.refuse(e.raw, RuleEntries, "the source holds more than %d entries", sc.lim.Entries)
	}
	if sc.seen[clean] {
		return sc.s.refuse(e.raw, RuleDuplicate, "a second entry named %q", clean)
	}
	sc.seen[clean] = true
	if e.kind == kindLink {
		if err := sc.s.checkTarget(e.raw, e.target); err != nil {
			return err
		}
	}
	if e.kind == kindFile {
		if e.size > sc.lim.EntryBytes {
			return sc.s.refuse(e.raw, RuleEntrySize, "the file claims %s, more than the %s a file may hold",
				homefile.Size(e.size), homefile.Size(sc.lim.EntryBytes))
		}
		if sc.total += e.size; sc.total > sc.lim.TotalBytes {
			return sc.s.refuse(e.raw, RuleTotalSize, "the files hold more than the %s a package may hold", homefile.Size(sc.lim.TotalBytes))
		}
	}
	sc.entries = append(sc.entries, e)
	return nil
}

// read reads a file entry's content to its end, checking that it holds
// what it claims and, for an archive, the compression ratio; it keeps the
// bytes of a manifest candidate.
func (sc *scan) read(e *entry, r io.Reader) error {
	keep := e.path == ManifestFile
	if top, rest, ok := strings.Cut(e.path, "/"); !keep && ok && rest == ManifestFile && sc.top == "" {
		sc.top, keep = top, true
	}
	var kept []byte
	buf := make([]byte, 32<<10)
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		sc.unpacked += int64(m)
		if keep && len(kept) <= MaxManifestSize {
			kept = append(kept, buf[:min(m, MaxManifestSize+1-len(kept))]...)
		}
		switch {
		case n > e.size:
			return sc.s.refuse(e.raw, RuleEntrySize, "the file holds more than the %s its header claims", homefile.Size(e.size))
		case sc.compressed != nil && sc.unpacked > RatioFloor && sc.unpacked > sc.lim.Ratio*max(sc.compressed(), 1):
			return sc.s.refuse(e.raw, RuleRatio, "the archive unpacks to more than %d times what it compresses to (%s from %s)",
				sc.lim.Ratio, homefile.Size(sc.unpacked), homefile.Size(sc.compressed()))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return &SourceError{Source: sc.s.given, Entry: e.raw, Rule: RuleFormat, Detail: "the archive is corrupt", Err: err}
		}
	}
	if n != e.size {
		return sc.s.refuse(e.raw, RuleFormat, "the archive is truncated: the file holds %d of the %d bytes its header claims", n, e.size)
	}
	if keep {
		sc.manifests[e.path] = kept
	}
	return nil
}

// scanDir walks a package directory without following symbolic links.
// Interpreter caches and version-control metadata (pkgfiles.Skipped) are
// left out, as the digest leaves them out. Contents are not read in this
// pass, except the manifest.
func (s *source) scanDir(lim Limits) (*scan, error) {
	sc := newScan(s, lim)
	err := filepath.WalkDir(s.abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == s.abs {
			return nil
		}
		rel, err := filepath.Rel(s.abs, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if pkgfiles.Skipped(rel, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := &entry{raw: rel}
		switch mode := info.Mode(); {
		case mode.IsDir():
			e.kind = kindDir
		case mode.IsRegular():
			e.kind, e.size, e.exec = kindFile, info.Size(), mode&0o111 != 0
		case mode&fs.ModeSymlink != 0:
			e.kind = kindLink
			if e.target, err = os.Readlink(p); err != nil {
				return err
			}
			e.target = filepath.ToSlash(e.target)
		default:
			return s.refuse(rel, RuleType, "the entry is %s, not a regular file, directory or symbolic link", homefile.TypeName(mode))
		}
		return sc.add(e)
	})
	var se *SourceError
	if errors.As(err, &se) {
		return nil, se
	}
	if err != nil {
		return nil, &SourceError{Source: s.given, Rule: RuleFormat, Detail: "cannot read the directory", Err: err}
	}
	if err := s.readDirManifest(sc); err != nil {
		return nil, err
	}
	return sc, nil
}

// readDirManifest keeps the first MaxManifestSize+1 bytes of a directory
// source's plugin.json, when it is a regular file; settle reports a
// missing one, a link or a directory.
func (s *source) readDirManifest(sc *scan) error {
	if !sc.seen[ManifestFile] {
		return nil
	}
	f, _, err := homefile.Open(filepath.Join(s.abs, ManifestFile))
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestSize+1))
	if err != nil {
		return &SourceError{Source: s.given, Entry: ManifestFile, Rule: RuleFormat, Detail: "cannot read the manifest", Err: err}
	}
	sc.manifests[ManifestFile] = data
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// scanTarGz reads a gzip-compressed tar archive to its end. A pax global
// header (as `git archive` writes) is skipped.
func (s *source) scanTarGz(f *os.File, lim Limits) (*scan, error) {
	sc := newScan(s, lim)
	cr := &countingReader{r: f}
	sc.compressed = func() int64 { return cr.n }
	gz, err := gzip.NewReader(cr)
	if err != nil {
		return nil, &SourceError{Source: s.given, Rule: RuleFormat, Detail: "not a readable gzip stream", Err: err}
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return sc, nil
		}
		if err != nil {
			return nil, &SourceError{Source: s.given, Rule: RuleFormat, Detail: "not a readable tar archive", Err: err}
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		e, err := s.tarEntry(h)
		if err != nil {
			return nil, err
		}
		if err := sc.add(e); err != nil {
			return nil, err
		}
		if e.kind == kindFile {
			if err := sc.read(e, tr); err != nil {
				return nil, err
			}
		}
	}
}

// tarEntry maps a tar header to an entry, refusing the types no package
// holds.
func (s *source) tarEntry(h *tar.Header) (*entry, error) {
	e := &entry{raw: h.Name}
	if _, err := s.cleanName(h.Name); err != nil {
		return nil, err
	}
	switch h.Typeflag {
	case tar.TypeReg:
		e.kind, e.size, e.exec = kindFile, h.Size, h.Mode&0o111 != 0
	case tar.TypeDir:
		e.kind = kindDir
	case tar.TypeSymlink:
		e.kind, e.target = kindLink, h.Linkname
	case tar.TypeLink:
		return nil, s.refuse(h.Name, RuleLink, "the entry is a hard link (to %q); a package holds none", h.Linkname)
	case tar.TypeChar, tar.TypeBlock:
		return nil, s.refuse(h.Name, RuleType, "the entry is a device, not a regular file, directory or symbolic link")
	case tar.TypeFifo:
		return nil, s.refuse(h.Name, RuleType, "the entry is a FIFO, not a regular file, directory or symbolic link")
	default:
		return nil, s.refuse(h.Name, RuleType, "the entry has tar type %q, not a regular file, directory or symbolic link", h.Typeflag)
	}
	return e, nil
}

// scanZip checks every entry's header first (names, types, claimed sizes
// and ratios), so that a zip bomb is refused before anything is unpacked;
// then it reads every entry, which also checks each CRC.
func (s *source) scanZip(f *os.File, size int64, lim Limits) (*scan, error) {
	zr, err := zip.NewReader(f, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // insecure names are refused below, by name
		return nil, &SourceError{Source: s.given, Rule: RuleFormat, Detail: "not a readable zip archive", Err: err}
	}
	if len(zr.File) > lim.Entries {
		return nil, s.refuse("", RuleEntries, "the source holds %d entries, more than %d", len(zr.File), lim.Entries)
	}
	sc := newScan(s, lim)
	entries := make([]*entry, len(zr.File))
	var unpacked uint64
	for i, zf := range zr.File {
		e, err := s.zipEntry(zf, lim)
		if err != nil {
			return nil, err
		}
		if err := sc.add(e); err != nil {
			return nil, err
		}
		if e.kind == kindFile {
			unpacked += zf.UncompressedSize64
		}
		entries[i] = e
	}
	if unpacked > RatioFloor && unpacked > uint64(lim.Ratio)*uint64(max(size, 1)) {
		return nil, s.refuse("", RuleRatio, "the archive claims to unpack to %s from %s: more than %d times what it compresses to",
			homefile.Size(int64(unpacked)), homefile.Size(size), lim.Ratio)
	}
	for i, zf := range zr.File {
		if e := entries[i]; e.path != "" && e.kind != kindDir {
			if err := s.readZipEntry(sc, zf, e); err != nil {
				return nil, err
			}
		}
	}
	return sc, nil
}

// zipEntry maps a zip header to an entry and checks its claims: the
// method, encryption, the size and the compression ratio.
func (s *source) zipEntry(zf *zip.File, lim Limits) (*entry, error) {
	e := &entry{raw: zf.Name}
	if _, err := s.cleanName(zf.Name); err != nil {
		return nil, err
	}
	mode := zf.Mode()
	switch {
	case mode.IsDir():
		e.kind = kindDir
		return e, nil
	case mode&fs.ModeSymlink != 0:
		e.kind = kindLink
	case mode.IsRegular():
		e.kind, e.exec = kindFile, mode&0o111 != 0
	default:
		return nil, s.refuse(zf.Name, RuleType, "the entry is %s, not a regular file, directory or symbolic link", homefile.TypeName(mode))
	}
	switch {
	case zf.Flags&0x1 != 0:
		return nil, s.refuse(zf.Name, RuleFormat, "the entry is encrypted")
	case zf.Method != zip.Store && zf.Method != zip.Deflate:
		return nil, s.refuse(zf.Name, RuleFormat, "the entry uses compression method %d; only stored and deflated entries are read", zf.Method)
	case zf.UncompressedSize64 > uint64(lim.EntryBytes):
		return nil, s.refuse(zf.Name, RuleEntrySize, "the file claims %s, more than the %s a file may hold",
			homefile.Size(int64(min(zf.UncompressedSize64, 1<<62))), homefile.Size(lim.EntryBytes))
	case zf.UncompressedSize64 > RatioFloor && zf.UncompressedSize64 > uint64(lim.Ratio)*max(zf.CompressedSize64, 1):
		return nil, s.refuse(zf.Name, RuleRatio, "the entry unpacks to %s from %s: more than %d times what it compresses to",
			homefile.Size(int64(zf.UncompressedSize64)), homefile.Size(int64(zf.CompressedSize64)), lim.Ratio)
	}
	e.size = int64(zf.UncompressedSize64)
	if e.kind == kindLink {
		if e.size > maxLinkTarget {
			return nil, s.refuse(zf.Name, RuleLink, "the symbolic link's target is longer than %d bytes", maxLinkTarget)
		}
		e.target = "-" // read with the content; checked then
	}
	return e, nil
}

// readZipEntry reads a file's content (checking its size and CRC) or a
// symbolic link's target.
func (s *source) readZipEntry(sc *scan, zf *zip.File, e *entry) error {
	rc, err := zf.Open()
	if err != nil {
		return &SourceError{Source: s.given, Entry: zf.Name, Rule: RuleFormat, Detail: "cannot unpack the entry", Err: err}
	}
	defer rc.Close()
	if e.kind == kindFile {
		return sc.read(e, rc)
	}
	target, err := io.ReadAll(io.LimitReader(rc, maxLinkTarget+1))
	if err != nil {
		return &SourceError{Source: s.given, Entry: zf.Name, Rule: RuleFormat, Detail: "cannot unpack the entry", Err: err}
	}
	e.target, e.size = string(target), 0
	return s.checkTarget(zf.Name, e.target)
}
