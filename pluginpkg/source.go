package pluginpkg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/extkernel/extkernel/internal/homefile"
)

// SourceKind is the kind of package source InstallSource reads.
type SourceKind string

// Source kinds, told apart by content (a directory, the gzip magic, the zip
// magic), not by the file name.
const (
	// SourceDir is a package directory.
	SourceDir SourceKind = "directory"
	// SourceTarGz is a gzip-compressed tar archive (.tar.gz, .tgz).
	SourceTarGz SourceKind = "tar.gz"
	// SourceZip is a zip archive.
	SourceZip SourceKind = "zip"
)

// Default bounds of a package source (Limits), documented in
// docs/manifest.md, "Installing a package".
const (
	// DefaultEntryBytes is the default largest regular file of a source:
	// 128 MiB.
	DefaultEntryBytes = 128 << 20
	// DefaultRatio is the default largest compression ratio of an
	// archive: 100 bytes unpacked per byte read.
	DefaultRatio = 100
	// RatioFloor is how much an archive may unpack, 1 MiB, before its
	// compression ratio is checked: small files of zeros compress far
	// better than any real package, and do no harm.
	RatioFloor = 1 << 20
)

// Limits bound what InstallSource and PreviewInstall read from a source;
// every bound is checked before anything is written. A zero field takes
// its default.
type Limits struct {
	// Entries is the most entries (files, directories and symbolic links)
	// a source may hold; default MaxPackageFiles.
	Entries int
	// EntryBytes is the largest regular file, by what an archive header
	// claims and by what the entry holds; default DefaultEntryBytes.
	EntryBytes int64
	// TotalBytes is the most the regular files may hold together; default
	// MaxPackageBytes, beyond which a package cannot be digested. It also
	// bounds the size of an archive file.
	TotalBytes int64
	// Ratio is the largest compression ratio of an archive (bytes unpacked
	// per byte of archive), checked once more than RatioFloor bytes are
	// unpacked, for each zip entry and the whole archive; default
	// DefaultRatio.
	Ratio int64
}

// withDefaults fills the zero fields of l.
func (l Limits) withDefaults() Limits {
	if l.Entries <= 0 {
		l.Entries = MaxPackageFiles
	}
	if l.EntryBytes <= 0 {
		l.EntryBytes = DefaultEntryBytes
	}
	if l.TotalBytes <= 0 {
		l.TotalBytes = MaxPackageBytes
	}
	if l.Ratio <= 0 {
		l.Ratio = DefaultRatio
	}
	return l
}

// SourceRule names the rule a refused package source breaks
// (SourceError.Rule).
type SourceRule string

// The rules a package source must keep (docs/manifest.md, "Installing a
// package").
const (
	// RulePath: an entry's name is empty, absolute (including a drive
	// letter), leaves the package through "..", holds a backslash or NUL,
	// is longer than 4096 bytes (255 a component), or lies inside a file
	// or a symbolic link of the source.
	RulePath SourceRule = "path"
	// RuleDuplicate: two entries have the same name.
	RuleDuplicate SourceRule = "duplicate"
	// RuleLink: a symbolic link is absolute, leaves the package, dangles
	// (points to nothing in the package) or loops; or an entry is a hard
	// link.
	RuleLink SourceRule = "link"
	// RuleType: an entry is a device, FIFO, socket or another kind of file
	// that is not a regular file, directory or symbolic link.
	RuleType SourceRule = "type"
	// RuleEntries: the source holds more than Limits.Entries entries.
	RuleEntries SourceRule = "entries"
	// RuleEntrySize: a file is larger than Limits.EntryBytes, or holds
	// more than its header claims.
	RuleEntrySize SourceRule = "entry-size"
	// RuleTotalSize: the files, or the archive file, hold more than
	// Limits.TotalBytes.
	RuleTotalSize SourceRule = "total-size"
	// RuleRatio: an archive unpacks to more than Limits.Ratio times what it
	// compresses to.
	RuleRatio SourceRule = "ratio"
	// RuleManifest: no plugin.json at the top of the source (or of its one
	// top-level directory), or it is not a regular file.
	RuleManifest SourceRule = "manifest"
	// RulePlatform: the manifest's runtime.platforms has no command for
	// this host's platform (HostPlatform) and it has no runtime.command
	// to fall back to.
	RulePlatform SourceRule = "platform"
	// RuleFormat: the source is not a directory, a tar.gz or a zip; the
	// archive is corrupt, truncated or encrypted; or it changed while it
	// was read.
	RuleFormat SourceRule = "format"
)

// ErrRefusedSource is matched (errors.Is) by every *SourceError: the
// package source breaks a rule and nothing was written.
var ErrRefusedSource = errors.New("package source refused")

// SourceError reports a package source that InstallSource or
// PreviewInstall refuses: which source, which entry and which rule. It is
// returned before anything is written, except for RuleFormat errors found
// while extracting (a source that changed after it was checked), which
// leave only a staging directory that the next install removes.
type SourceError struct {
	// Source is the source's path as given.
	Source string
	// Entry is the entry's name as the source writes it; empty when the
	// problem is the whole source.
	Entry string
	// Rule is the rule broken.
	Rule SourceRule
	// Detail says what was found, as a phrase: "the path leaves the package
	// (..)".
	Detail string
	// Err is the underlying error, such as a gzip error; often nil.
	Err error
}

// Error formats the refusal as `source S: entry "E": detail (rule R)`.
func (e *SourceError) Error() string {
	var b strings.Builder
	b.WriteString("source " + e.Source + ": ")
	if e.Entry != "" {
		fmt.Fprintf(&b, "entry %q: ", e.Entry)
	}
	b.WriteString(e.Detail)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	b.WriteString(" (rule " + string(e.Rule) + ")")
	return b.String()
}

// Unwrap returns the underlying error.
func (e *SourceError) Unwrap() error { return e.Err }

// Is reports whether target is ErrRefusedSource.
func (e *SourceError) Is(target error) bool { return target == ErrRefusedSource }

// Bounds of an entry's name (RulePath).
const (
	maxNameBytes      = 4096
	maxComponentBytes = 255
	// maxLinkTarget bounds a zip symbolic link's target, read from its
	// content.
	maxLinkTarget = 4096
)

// entryKind is what an entry of a source is.
type entryKind int

const (
	kindFile entryKind = iota + 1
	kindDir
	kindLink
)

// entry is one entry of a source, as checked.
type entry struct {
	// raw is the name as the source writes it (for a directory source, the
	// path relative to it, slash-separated).
	raw string
	// path is the cleaned slash-separated path inside the package, after
	// the top-level directory is stripped.
	path   string
	kind   entryKind
	size   int64  // regular files
	exec   bool   // regular files: installed 0755 rather than 0644
	target string // symbolic links
}

// source is a package source that passed every check: what will be written.
type source struct {
	// given is the path as the caller gave it, abs its resolved absolute
	// path.
	given, abs string
	kind       SourceKind
	lim        Limits
	// entries are the files and links to write, in source order; dirs
	// every directory (explicit or implied by a path), sorted.
	entries []*entry
	dirs    []string
	byPath  map[string]*entry
	// prefix is the raw top-level directory stripped ("" when none),
	// with its trailing slash.
	prefix   string
	manifest *Manifest
	// manifestSHA256 is the hex sha256 of plugin.json's bytes.
	manifestSHA256 string
}

// refuse builds the *SourceError for entry (raw name, "" for the source).
func (s *source) refuse(raw string, rule SourceRule, format string, args ...any) *SourceError {
	return &SourceError{Source: s.given, Entry: raw, Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

// openSource reads and checks the package source at path with the bounds
// lim (defaults filled in): every entry, the tree, the manifest. It
// writes nothing.
func openSource(path string, lim Limits) (*source, error) {
	s := &source{given: path, lim: lim}
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", path, err)
	}
	s.abs = abs
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", path, err)
	}
	var sc *scan
	if fi.IsDir() {
		s.kind = SourceDir
		sc, err = s.scanDir(lim)
	} else {
		sc, err = s.scanArchive(lim)
	}
	if err != nil {
		return nil, err
	}
	if err := s.settle(sc); err != nil {
		return nil, err
	}
	return s, nil
}

// scanArchive opens an archive file (refusing anything but a regular file
// of at most lim.TotalBytes), tells its kind from its first bytes and
// scans it.
func (s *source) scanArchive(lim Limits) (*scan, error) {
	f, fi, err := homefile.Open(s.abs)
	var refused *homefile.Error
	if errors.As(err, &refused) {
		return nil, s.refuse("", RuleFormat, "not a package directory, .tar.gz or .zip: %s", refused.Reason())
	}
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", s.given, err)
	}
	defer f.Close()
	if fi.Size() > lim.TotalBytes {
		return nil, s.refuse("", RuleTotalSize, "the archive is %s, more than the %s a package may hold",
			homefile.Size(fi.Size()), homefile.Size(lim.TotalBytes))
	}
	var magic [4]byte
	n, _ := f.ReadAt(magic[:], 0)
	switch m := string(magic[:n]); {
	case strings.HasPrefix(m, "\x1f\x8b"):
		s.kind = SourceTarGz
		return s.scanTarGz(f, lim)
	case m == "PK\x03\x04" || m == "PK\x05\x06":
		s.kind = SourceZip
		return s.scanZip(f, fi.Size(), lim)
	}
	return nil, s.refuse("", RuleFormat, "not a package directory, .tar.gz or .zip (the file starts with neither the gzip nor the zip signature)")
}

// cleanName checks an entry's raw name and returns its cleaned
// slash-separated path ("" for the source's root directory, "./"), or the
// refusal.
func (s *source) cleanName(raw string) (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", s.refuse(raw, RulePath, format, args...)
	}
	switch {
	case raw == "":
		return bad("the name is empty")
	case strings.ContainsRune(raw, 0):
		return bad("the name holds a NUL byte")
	case strings.ContainsRune(raw, '\\'):
		return bad(`the name holds a backslash; separators must be "/"`)
	case strings.HasPrefix(raw, "/"):
		return bad("the path is absolute")
	case hasDrive(raw):
		return bad("the path starts with a drive letter")
	case len(raw) > maxNameBytes:
		return bad("the name is longer than %d bytes", maxNameBytes)
	}
	var parts []string
	for _, c := range strings.Split(raw, "/") {
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			return bad("the path leaves the package (..)")
		case len(c) > maxComponentBytes:
			return bad("a component is longer than %d bytes", maxComponentBytes)
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, "/"), nil
}

// checkTarget checks a symbolic link's target as written, before the tree
// is known: it must be relative and well formed.
func (s *source) checkTarget(raw, target string) error {
	switch {
	case target == "":
		return s.refuse(raw, RuleLink, "the symbolic link has an empty target")
	case len(target) > maxLinkTarget:
		return s.refuse(raw, RuleLink, "the symbolic link's target is longer than %d bytes", maxLinkTarget)
	case strings.ContainsRune(target, 0) || strings.ContainsRune(target, '\\'):
		return s.refuse(raw, RuleLink, "the symbolic link's target %q holds a NUL byte or a backslash", target)
	case strings.HasPrefix(target, "/") || hasDrive(target):
		return s.refuse(raw, RuleLink, "the symbolic link points to the absolute path %q, outside the package", target)
	}
	return nil
}

// hasDrive reports whether p starts with a drive letter and a colon ("C:").
func hasDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z'
}
