package pluginpkg

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// packTime is the modification time of every entry Pack writes: the
// Unix epoch, so that the archive does not depend on when it was made.
var packTime = time.Unix(0, 0).UTC()

// Packed is what Pack wrote.
type Packed struct {
	// Manifest is the package's parsed manifest, and ManifestBytes the
	// plugin.json bytes archived.
	Manifest      *Manifest
	ManifestBytes []byte
	// Entries is how many files, directories and symbolic links the
	// archive holds.
	Entries int
}

// Pack writes the package directory dir to w as a gzip-compressed tar
// archive that InstallSource installs, with the same bytes for the same
// package whoever packs it, wherever and whenever: the package at the
// top of the archive, entries sorted by path (each directory before what
// it holds), every modification time the Unix epoch, owner and group 0
// without names, modes normalised as an install writes them (0755
// directories and executables, 0644 other files), no other header field
// and no gzip name or time. The directory is checked as InstallSource
// checks a source (docs/manifest.md, "Installing a package"): a
// *SourceError names the entry and rule it breaks, a *ValidationError an
// invalid manifest. Interpreter caches and version-control metadata are
// left out. Each command of runtime (runtime.command and every
// runtime.platforms entry) that is relative MUST be an executable regular
// file of the package; otherwise Pack fails naming the field. The
// package's platforms need not include the one Pack runs on.
//
// On failure w may hold part of an archive.
func Pack(dir string, w io.Writer) (*Packed, error) {
	s, err := openSource(dir, Limits{}.withDefaults())
	if err != nil {
		return nil, err
	}
	if s.kind != SourceDir {
		return nil, fmt.Errorf("pack %s: not a package directory", dir)
	}
	if err := s.checkCommands(); err != nil {
		return nil, err
	}
	data, err := homefile.Read(filepath.Join(s.abs, ManifestFile), MaxManifestSize)
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	if sha256Hex(data) != s.manifestSHA256 {
		return nil, s.changed(ManifestFile)
	}
	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	n, err := s.writeTar(tw)
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("pack %s: %w", dir, err)
	}
	return &Packed{Manifest: s.manifest, ManifestBytes: data, Entries: n}, nil
}

// checkCommands checks that every relative command of the manifest's
// runtime is an executable regular file of the source.
func (s *source) checkCommands() error {
	rt := s.manifest.Runtime
	if rt == nil {
		return nil
	}
	cmds := map[string]string{"runtime.command": rt.CommandFor("")}
	for _, p := range slices.Sorted(maps.Keys(rt.Platforms)) {
		cmds[fmt.Sprintf("runtime.platforms[%q]", p)] = rt.Platforms[p]
	}
	for _, at := range slices.Sorted(maps.Keys(cmds)) {
		c := cmds[at]
		if c == "" || !pkgfiles.IsRelativeCommand(c) {
			continue
		}
		e := s.follow(path.Clean(c))
		switch {
		case e == nil:
			return fmt.Errorf("pack %s: %s: %q is not in the package", s.given, at, c)
		case e.kind != kindFile:
			return fmt.Errorf("pack %s: %s: %q is not a regular file", s.given, at, c)
		case !e.exec:
			return fmt.Errorf("pack %s: %s: %q is not executable (chmod +x it)", s.given, at, c)
		}
	}
	return nil
}

// follow returns the entry at p, following the package's own symbolic
// links (settle checked they resolve inside it); nil when there is none.
func (s *source) follow(p string) *entry {
	for range maxLinkHops {
		e := s.byPath[p]
		if e == nil || e.kind != kindLink {
			return e
		}
		p = path.Clean(path.Join(path.Dir(p), e.target))
	}
	return nil
}

// writeTar writes the source's directories, files and links to tw in
// path order with normalised headers, and returns how many it wrote.
func (s *source) writeTar(tw *tar.Writer) (int, error) {
	type item struct {
		path string
		e    *entry // nil for a directory
	}
	items := make([]item, 0, len(s.dirs)+len(s.entries))
	for _, d := range s.dirs {
		items = append(items, item{path: d})
	}
	for _, e := range s.entries {
		items = append(items, item{path: e.path, e: e})
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.path, b.path) })
	for _, it := range items {
		h := &tar.Header{Name: it.path, ModTime: packTime, Mode: 0o755, Format: tar.FormatPAX}
		switch {
		case it.e == nil:
			h.Typeflag, h.Name = tar.TypeDir, it.path+"/"
		case it.e.kind == kindLink:
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, it.e.target, 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, it.e.size
			if !it.e.exec {
				h.Mode = 0o644
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return 0, err
		}
		if it.e != nil && it.e.kind == kindFile {
			if err := s.copyTo(tw, it.e); err != nil {
				return 0, err
			}
		}
	}
	return len(items), nil
}

// copyTo copies file e of a directory source to w, refusing it when it
// is no longer the regular file of the size the scan saw.
func (s *source) copyTo(w io.Writer, e *entry) error {
	f, fi, err := homefile.Open(filepath.Join(s.abs, filepath.FromSlash(e.raw)))
	if err != nil {
		return err
	}
	defer f.Close()
	if fi.Size() != e.size || fi.Mode()&0o111 != 0 != e.exec {
		return s.changed(e.raw)
	}
	n, err := io.Copy(w, io.LimitReader(f, e.size+1))
	if err == nil && n != e.size {
		return s.changed(e.raw)
	}
	return err
}
