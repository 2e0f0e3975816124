package generation

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/jsonfile"
	"github.com/extkernel/extkernel/internal/semverstr"
)

// SnapshotFormat is the snapshot format version this build writes and
// reads. Readers ignore fields they do not know, so later minor additions
// stay readable; a different format number is refused.
const SnapshotFormat = 1

// MaxSnapshotSize is the largest snapshot file ReadSnapshot reads, in bytes
// (docs/snapshot.md).
const MaxSnapshotSize = 16 << 20

// StatusCrashed is a snapshot-only status: the member was running but its
// sidecar has exited since (the running set that owns it says so; a
// Generation's own snapshot never does).
const StatusCrashed MemberStatus = "crashed"

// statusPlanned is the status of a package in a plan's desired side: it
// would run, but nothing has started.
const statusPlanned MemberStatus = "planned"

// Snapshot is the stable, versioned JSON form of a generation (see
// docs/snapshot.md). Diff compares two of them; NewPlan compares one with
// what disk and config now ask for.
type Snapshot struct {
	Format     int       `json:"format"`
	Generation uint64    `json:"generation"`
	Created    time.Time `json:"created"`
	// Hash is the generation's input hash (Generation.Hash).
	Hash     string            `json:"hash"`
	Packages []SnapshotPackage `json:"packages"`
	// Contributions are in registry order (kind, then key, then effective
	// order).
	Contributions []SnapshotContribution `json:"contributions"`
	Warnings      []string               `json:"warnings"`
	// Plan is the plan that produced this generation, if any.
	Plan *Plan `json:"plan,omitempty"`
}

// SnapshotPackage is one member of a snapshot.
type SnapshotPackage struct {
	Name        string       `json:"name"`
	Version     string       `json:"version"`
	Status      MemberStatus `json:"status"`
	Required    bool         `json:"required"`
	Reason      string       `json:"reason,omitempty"`
	Fingerprint Fingerprint  `json:"fingerprint"`
	// DependsOn lists the members this one's requirements resolved to.
	DependsOn []string `json:"depends_on,omitempty"`
	// Intercepts and Replaces are the manifest's authorizations.
	Intercepts []string `json:"intercepts,omitempty"`
	Replaces   []string `json:"replaces,omitempty"`
	// Priority is the manifest's runtime priority.
	Priority int `json:"priority,omitempty"`
	// Activation is "lazy" for a member started on first use (its Status
	// is StatusDeclared until it is), empty for an eager one.
	Activation string `json:"activation,omitempty"`
}

// SnapshotContribution is one contribution of a snapshot.
type SnapshotContribution struct {
	Kind     contribution.Kind   `json:"kind"`
	Key      string              `json:"key"`
	Plugin   string              `json:"plugin"`
	Origin   contribution.Origin `json:"origin"`
	Priority int                 `json:"priority"`
	Seq      int                 `json:"seq"`
}

// Snapshot returns the generation's snapshot, members as of the build
// (whoever runs the generation reports a member that has exited since as
// StatusCrashed). The snapshot is built once per generation; each call
// returns a fresh Snapshot value and Packages slice, but the slices inside
// them (Contributions, Warnings, DependsOn, ...) are shared and MUST NOT
// be modified.
func (g *Generation) Snapshot() *Snapshot {
	g.snapOnce.Do(func() { g.snap = g.baseSnapshot() })
	s := *g.snap
	s.Packages = append([]SnapshotPackage(nil), g.snap.Packages...)
	return &s
}

// baseSnapshot builds the snapshot as of the build.
func (g *Generation) baseSnapshot() *Snapshot {
	s := &Snapshot{Format: SnapshotFormat, Generation: g.number, Created: g.created, Hash: g.hash,
		Packages: make([]SnapshotPackage, 0, len(g.members)), Contributions: []SnapshotContribution{},
		Warnings: g.Warnings(), Plan: g.plan}
	if s.Warnings == nil {
		s.Warnings = []string{}
	}
	for i, m := range g.members {
		s.Packages = append(s.Packages, snapshotPackage(m, g.inputs[i], g.closure.DependsOn[m.Package.Name]))
	}
	s.Contributions = snapshotContributions(g.registry)
	return s
}

func snapshotPackage(m *Member, fp Fingerprint, deps []string) SnapshotPackage {
	p := m.Package
	sp := SnapshotPackage{Name: p.Name, Version: semverstr.String(p.Manifest.Version), Status: m.Status, Required: m.Required,
		Reason: m.Reason, Fingerprint: fp, DependsOn: append([]string(nil), deps...), Activation: m.lazy}
	if rt := p.Manifest.Runtime; rt != nil {
		for _, pt := range rt.Intercepts {
			sp.Intercepts = append(sp.Intercepts, string(pt))
		}
		for _, sl := range rt.Replaces {
			sp.Replaces = append(sp.Replaces, string(sl))
		}
		sp.Priority = rt.Priority
	}
	return sp
}

// package returns the named package of the snapshot, or nil.
func (s *Snapshot) pkg(name string) *SnapshotPackage {
	i := sort.Search(len(s.Packages), func(i int) bool { return s.Packages[i].Name >= name })
	if i < len(s.Packages) && s.Packages[i].Name == name {
		return &s.Packages[i]
	}
	return nil
}

// runsFiles reports whether the named package's entry in s (nil: none)
// records the files its process was started from: for an eager member
// with a runtime always, for a lazy one while its process runs.
func (s *Snapshot) runsFiles(name string) bool {
	if s == nil {
		return false
	}
	p := s.pkg(name)
	return p != nil && p.Fingerprint.Files != ""
}

// ParseSnapshot decodes a snapshot, tolerating unknown fields. path is used
// in messages, which give the line and column of invalid JSON, of a value
// of the wrong type and of data after the snapshot.
func parseSnapshot(path string, data []byte) (*Snapshot, error) {
	var s Snapshot
	if err := jsonfile.Unmarshal(data, &s, false); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if s.Format != SnapshotFormat {
		return nil, fmt.Errorf("snapshot %s: format %d is not supported (this build reads format %d)", path, s.Format, SnapshotFormat)
	}
	sort.Slice(s.Packages, func(i, j int) bool { return s.Packages[i].Name < s.Packages[j].Name })
	return &s, nil
}

// ReadSnapshot reads and parses a snapshot file. A file larger than
// MaxSnapshotSize, or one that is not a regular file (a directory, device
// or FIFO), is refused without being read, with an error naming path; a
// missing file gives an error matching fs.ErrNotExist.
func ReadSnapshot(path string) (*Snapshot, error) {
	data, err := homefile.Read(path, MaxSnapshotSize)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return parseSnapshot(path, data)
}

// WriteSnapshot writes s as indented JSON to path atomically (a temporary
// file in the same directory, fsync, rename), creating the directory.
func WriteSnapshot(path string, s *Snapshot) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".snapshot-*")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	_, err = tmp.Write(append(data, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", path, err)
	}
	return nil
}
