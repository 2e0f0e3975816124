package pluginpkg

import (
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// maxLinkHops bounds how many symbolic links resolving one path may follow,
// as the kernel's ELOOP does.
const maxLinkHops = 40

// settle turns the scanned entries into what will be written: it strips an
// archive's one top-level directory when the manifest is inside it, leaves
// out what pkgfiles.Skipped names, checks the tree (no entry inside a file
// or a symbolic link, every link resolving inside the package) and parses
// the manifest.
func (s *source) settle(sc *scan) error {
	entries := sc.entries
	manifestAt := ManifestFile
	if s.kind != SourceDir {
		if top := soleTop(entries); top != "" && sc.manifests[top+"/"+ManifestFile] != nil && !sc.seen[ManifestFile] {
			s.prefix, manifestAt = top+"/", top+"/"+ManifestFile
		}
	}
	s.byPath = make(map[string]*entry, len(entries))
	for _, e := range entries {
		if s.prefix != "" {
			if e.path == strings.TrimSuffix(s.prefix, "/") {
				continue
			}
			e.path = strings.TrimPrefix(e.path, s.prefix)
		}
		if skippedPath(e.path, e.kind == kindDir) {
			continue
		}
		s.byPath[e.path] = e
		if e.kind != kindDir {
			s.entries = append(s.entries, e)
		}
	}
	if err := s.checkTree(entries); err != nil {
		return err
	}
	return s.parseManifest(sc.manifests[manifestAt], manifestAt)
}

// soleTop returns the first path component shared by every entry, when
// there is exactly one and it is a directory; "" otherwise.
func soleTop(entries []*entry) string {
	if len(entries) == 0 {
		return ""
	}
	top, _, _ := strings.Cut(entries[0].path, "/")
	for _, e := range entries {
		first, _, nested := strings.Cut(e.path, "/")
		if first != top || !nested && e.kind != kindDir {
			return ""
		}
	}
	return top
}

// skippedPath reports whether p, or a directory holding it, is one that
// pkgfiles.Skipped leaves out of a package.
func skippedPath(p string, dir bool) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && pkgfiles.Skipped(p[:i], true) {
			return true
		}
	}
	return pkgfiles.Skipped(p, dir)
}

// checkTree checks the entries kept in s.byPath, in source order: no entry
// lies inside a file or a symbolic link, and every symbolic link resolves,
// through the package's own entries, to a file or directory of the
// package. It fills s.dirs.
func (s *source) checkTree(order []*entry) error {
	dirs := map[string]bool{}
	for _, e := range order {
		if s.byPath[e.path] != e {
			continue
		}
		if e.kind == kindDir {
			dirs[e.path] = true
		}
		for i := 0; i < len(e.path); i++ {
			if e.path[i] != '/' {
				continue
			}
			parent := e.path[:i]
			switch p := s.byPath[parent]; {
			case p == nil || p.kind == kindDir:
				dirs[parent] = true
			case p.kind == kindLink:
				return s.refuse(e.raw, RulePath, "the entry lies inside the symbolic link %q", parent)
			default:
				return s.refuse(e.raw, RulePath, "the entry lies inside the file %q", parent)
			}
		}
	}
	for _, e := range s.entries {
		if e.kind != kindLink {
			continue
		}
		if problem := s.resolve(e); problem != "" {
			return s.refuse(e.raw, RuleLink, "the symbolic link to %q %s", e.target, problem)
		}
	}
	for d := range dirs {
		s.dirs = append(s.dirs, d)
	}
	slices.Sort(s.dirs)
	return nil
}

// resolve follows the symbolic link l through the package's entries as the
// operating system would, component by component (so "d/.." where d is a
// link goes where d leads, not back), and returns "" when it ends at a file
// or directory of the package, or what goes wrong.
func (s *source) resolve(l *entry) string {
	var cur []string // the physical directory reached, as components
	if dir := path.Dir(l.path); dir != "." {
		cur = strings.Split(dir, "/")
	}
	queue := strings.Split(l.target, "/")
	hops := 1
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "points outside the package"
			}
			cur = cur[:len(cur)-1]
			continue
		}
		next := append(slices.Clip(cur), c)
		n := s.byPath[strings.Join(next, "/")]
		switch {
		case n == nil:
			return "dangles: nothing in the package is at " + strings.Join(next, "/")
		case n.kind == kindLink:
			if hops++; hops > maxLinkHops {
				return "loops (more than 40 symbolic links to follow)"
			}
			if strings.HasPrefix(n.target, "/") || hasDrive(n.target) {
				return "points outside the package"
			}
			queue = append(strings.Split(n.target, "/"), queue...)
		case n.kind == kindFile && len(queue) > 0:
			return "dangles: " + strings.Join(next, "/") + " is a file, not a directory"
		default:
			cur = next
		}
	}
	return ""
}

// parseManifest checks and parses the manifest at the cleaned path at
// (before stripping), whose first bytes are data.
func (s *source) parseManifest(data []byte, at string) error {
	e := s.byPath[ManifestFile]
	switch {
	case e == nil:
		return s.refuse("", RuleManifest, "no %s at the top of the source or of its one top-level directory", ManifestFile)
	case e.kind != kindFile:
		what := "a symbolic link"
		if e.kind == kindDir {
			what = "a directory"
		}
		return s.refuse(e.raw, RuleManifest, "the manifest is %s; it must be a regular file", what)
	case data == nil:
		return s.refuse(e.raw, RuleManifest, "the manifest cannot be read")
	}
	name := s.given + ":" + at
	if s.kind == SourceDir {
		name = filepath.Join(s.given, ManifestFile)
	}
	m, err := Parse(name, data)
	if err != nil {
		return err
	}
	if !safeName(m.Name) {
		return errors.New(name + ": name: not a package name") // Parse's grammar already refuses such names
	}
	s.manifest, s.manifestSHA256 = m, sha256Hex(data)
	return nil
}
