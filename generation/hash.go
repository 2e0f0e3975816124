package generation

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/internal/parallel"
	"github.com/extkernel/extkernel/internal/semverstr"
	"github.com/extkernel/extkernel/pluginpkg"
)

// maxRecordedFiles is the most files whose digests a fingerprint records
// (Fingerprint.FileDigests). A package with more files is still covered by
// Fingerprint.Files, but a plan can then only say "package files changed",
// not which.
const maxRecordedFiles = 1000

// Fingerprint is what identifies one member's inputs: if any field but
// Interpreter differs between two generations, the member's sidecar must be
// restarted.
type Fingerprint struct {
	Version string `json:"version"`
	// Manifest is the hex sha256 of the manifest file.
	Manifest string `json:"manifest"`
	// Executable identifies the runtime command by content: "sha256:<hex>"
	// of the file it resolves to (for a bare command, whatever this
	// process's PATH leads to), "missing: <error>" when it cannot be
	// resolved or read, and empty for declarative packages. Snapshots of
	// earlier versions hold "size:<bytes>,mtime:<unix ns>" or the pin.
	Executable string `json:"executable,omitempty"`
	// Interpreter is the resolved path of a bare command (such as
	// /usr/bin/python3), named in plan reasons. It is not compared: the
	// same content found under another PATH is no change.
	Interpreter string `json:"interpreter,omitempty"`
	// Files is "sha256:<hex>", the digest of the package's own files
	// (pluginpkg.FileDigest), or "unreadable: <error>" when they cannot be
	// digested; empty for declarative packages and in snapshots of earlier
	// versions.
	Files string `json:"files,omitempty"`
	// FileDigests maps each file's path relative to the package directory
	// to a short digest, so a plan can name what changed; omitted for a
	// package of more than 1,000 files.
	FileDigests map[string]string `json:"file_digests,omitempty"`
	// Config is the hex sha256 of the member's launch value (Launch):
	// its config, environment (a secret value by its own digest) and
	// limits; empty when it has none. Snapshots of earlier versions hashed
	// a secret value as "[REDACTED]", so a package with a secret is "config
	// changed" once against them.
	Config   string `json:"config,omitempty"`
	Required bool   `json:"required"`
}

// packageFingerprint computes the fingerprint of one member under its
// policy and launch value. Files are digested through pluginpkg's
// process-wide cache: an unchanged file is stat'ed, not read. A lazy
// member's files and command are left out (WithFiles): they are read when
// its process starts, so a lazy member that is never used costs its host
// no file read at all.
func packageFingerprint(m *Member) Fingerprint {
	p := m.Package
	f := Fingerprint{Version: semverstr.String(p.Manifest.Version), Manifest: p.ManifestSHA256, Required: m.Required,
		Config: m.config}
	if m.lazy != "" {
		return f
	}
	return f.WithFiles(p)
}

// WithFiles returns f with the files and command of p, the package f is
// the fingerprint of, as they are now: Files, FileDigests, Executable and
// Interpreter (f itself for a declarative package). A lazy member's
// fingerprint (Member.Fingerprint) leaves them out, for its files are read
// only when its process starts: whoever starts it records WithFiles just
// before the spawn, and a plan compares a lazy member's files only while
// its process runs (docs/snapshot.md, "Lazy members").
func (f Fingerprint) WithFiles(p *pluginpkg.Package) Fingerprint {
	if p.Manifest.Runtime == nil {
		return f
	}
	if d, err := p.FilesDigest(); err != nil {
		f.Files = "unreadable: " + err.Error()
	} else {
		f.Files = "sha256:" + d.Sum
		if len(d.Files) <= maxRecordedFiles {
			f.FileDigests = d.Files
		}
	}
	path, sum, err := p.CommandDigest()
	if err != nil {
		f.Executable = "missing: " + err.Error()
		return f
	}
	f.Executable = "sha256:" + sum
	if p.CommandIsInterpreter() {
		f.Interpreter = path
	}
	return f
}

// fingerprints computes every member's fingerprint, in members' order. A
// lazy or declarative member's reads no file (packageFingerprint): those
// are taken in this goroutine; the others, a few file-system calls each (a
// walk of the package, a stat of each file and of the executable; contents
// are hashed only when they changed), several at once, for a host of many
// packages waits on them at every build and plan.
func fingerprints(members []*Member) []Fingerprint {
	fps := make([]Fingerprint, len(members))
	files := make([]int, 0, len(members))
	for i, m := range members {
		if m.lazy != "" || m.Package.Manifest.Runtime == nil {
			fps[i] = m.Fingerprint()
		} else {
			files = append(files, i)
		}
	}
	// packageFingerprint records failures in the fingerprint.
	parallel.For(len(files), parallel.FileWorkers, func(j int) { fps[files[j]] = members[files[j]].Fingerprint() })
	return fps
}

// hashFingerprints is hashInputs of the fingerprints fps holds by member
// name.
func hashFingerprints(fps map[string]Fingerprint, in Inputs) string {
	names := make([]string, 0, len(fps))
	list := make([]Fingerprint, 0, len(fps))
	for name, f := range fps {
		names, list = append(names, name), append(list, f)
	}
	return hashInputs(names, list, in)
}

// inNameOrder returns names and fps, aligned, in name order: themselves
// when they already are (a generation's members, from the closure), else
// sorted copies.
func inNameOrder(names []string, fps []Fingerprint) ([]string, []Fingerprint) {
	if slices.IsSorted(names) {
		return names, fps
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	sortedNames, sortedFps := make([]string, len(names)), make([]Fingerprint, len(fps))
	for k, i := range order {
		sortedNames[k], sortedFps[k] = names[i], fps[i]
	}
	return sortedNames, sortedFps
}

// hashInputs hashes the member fingerprints fps (of the members names,
// aligned, in any order: they are hashed in name order) and the host's
// side of the inputs in a canonical order. Fields are written with
// separators that cannot occur in them (NUL, newline), without encoding:
// a reload hashes every member's inputs, so this is on its path.
func hashInputs(names []string, fps []Fingerprint, in Inputs) string {
	names, fps = inNameOrder(names, fps)
	// The fields are gathered into a buffer on the stack and hashed a few
	// kilobytes at a time: a small Write costs the hash more than the
	// bytes it carries, and a buffer of the whole would be garbage of a
	// hundred bytes a member.
	h := sha256.New()
	var scratch [4096]byte
	buf := scratch[:0]
	field := func(s string) {
		if len(buf)+len(s)+2 > cap(buf) { // 2: its NUL, and a newline after it
			h.Write(buf)
			buf = buf[:0]
		}
		buf = append(buf, s...)
		buf = append(buf, 0)
	}
	for i, f := range fps {
		field(names[i])
		field(f.Version)
		field(f.Manifest)
		field(f.Executable)
		field(f.Files)
		field(f.Config)
		field(strconv.FormatBool(f.Required))
		buf = append(buf, '\n')
	}
	host := make([]string, 0, len(in.Host))
	for _, c := range in.Host {
		host = append(host, string(c.Key)+"@"+semverstr.String(c.Version))
	}
	owners := make([]string, 0, len(in.Spec.SlotOwners))
	for s, o := range in.Spec.SlotOwners {
		owners = append(owners, string(s)+"="+o)
	}
	points := make([]string, 0, len(in.Spec.Points))
	for _, p := range in.Spec.Points {
		points = append(points, string(p))
	}
	slots := make([]string, 0, len(in.Spec.Slots))
	for _, s := range in.Spec.Slots {
		slots = append(slots, string(s))
	}
	roots := append([]string(nil), in.Roots...)
	for _, list := range [][]string{host, points, slots, owners, roots} {
		sort.Strings(list)
		for _, s := range list {
			field(s)
		}
		buf = append(buf, '\n')
	}
	field(strconv.FormatBool(in.Spec.Strict))
	for _, k := range kindFields(in.Spec.Kinds) {
		field(k)
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(scratch[:0]))
}
