package pluginpkg

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/extkernel/extkernel/internal/jsonfile"
	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// ErrBakeEnded is returned (wrapped; test with errors.Is) by RollbackBake
// when the package no longer runs the version under bake: its bake passed
// or was ended, or another install or rollback replaced it meanwhile.
var ErrBakeEnded = errors.New("no bake of that version in progress")

// Bake is an upgrade on probation (docs/operations.md, "Bake"). An upgrade
// with InstallOptions.Bake records it in the state file beside the package;
// a running kernel watches the version under bake for Duration from when it
// first runs it and, when that version exceeds its crash budget or
// MaxErrorRate, returns to the version it replaced on its own
// (RollbackBake, then a reload). A bake that runs its Duration out is
// ended (EndBake). Any other install, upgrade or rollback of the package
// ends it too.
type Bake struct {
	// Duration is how long the kernel watches the new version: positive.
	Duration time.Duration
	// MaxErrorRate, when above zero, is the share of the calls to the new
	// version (0 < r <= 1) that may fail during the bake once at least
	// MinCalls of them ended; more is a failed bake. Zero watches the crash
	// budget alone.
	MaxErrorRate float64
	// MinCalls is how many calls must have ended before MaxErrorRate is
	// judged (zero: from the first failed call).
	MinCalls int
	// Digest is the files digest (FileDigest.Sum) of the version under
	// bake; FromVersion and FromDigest are the version it replaced, kept
	// in packages/.previous for the return. InstallSource fills them in:
	// the ones given in InstallOptions.Bake are ignored.
	Digest, FromVersion, FromDigest string
}

// Validate checks b's settings, naming the field at fault.
func (b *Bake) Validate() error {
	switch {
	case b.Duration <= 0:
		return fmt.Errorf("bake: duration %v is not positive", b.Duration)
	case math.IsNaN(b.MaxErrorRate) || b.MaxErrorRate < 0 || b.MaxErrorRate > 1:
		return fmt.Errorf("bake: max error rate %v is not between 0 and 1", b.MaxErrorRate)
	case b.MinCalls < 0:
		return fmt.Errorf("bake: min calls %d is negative", b.MinCalls)
	}
	return nil
}

// clone returns a copy of b (nil for nil).
func (b *Bake) clone() *Bake {
	if b == nil {
		return nil
	}
	c := *b
	return &c
}

// bakeJSON is a Bake in the state file.
type bakeJSON struct {
	Duration     jsonfile.Duration `json:"duration"`
	MaxErrorRate float64           `json:"max_error_rate,omitempty"`
	MinCalls     int               `json:"min_calls,omitempty"`
	Digest       string            `json:"digest"`
	FromVersion  string            `json:"from_version"`
	FromDigest   string            `json:"from_digest,omitempty"`
}

// toBakeJSON converts b; nil for nil.
func toBakeJSON(b *Bake) *bakeJSON {
	if b == nil {
		return nil
	}
	return &bakeJSON{Duration: jsonfile.Duration(b.Duration), MaxErrorRate: b.MaxErrorRate, MinCalls: b.MinCalls,
		Digest: b.Digest, FromVersion: b.FromVersion, FromDigest: b.FromDigest}
}

// bake converts j back and checks it; nil for nil.
func (j *bakeJSON) bake() (*Bake, error) {
	if j == nil {
		return nil, nil
	}
	b := &Bake{Duration: time.Duration(j.Duration), MaxErrorRate: j.MaxErrorRate, MinCalls: j.MinCalls,
		Digest: j.Digest, FromVersion: j.FromVersion, FromDigest: j.FromDigest}
	switch {
	case b.Duration <= 0:
		return nil, errors.New("bake.duration: missing")
	case math.IsNaN(b.MaxErrorRate) || b.MaxErrorRate < 0 || b.MaxErrorRate > 1:
		return nil, fmt.Errorf("bake.max_error_rate: %v is not between 0 and 1", b.MaxErrorRate)
	case b.MinCalls < 0:
		return nil, fmt.Errorf("bake.min_calls: %d is negative", b.MinCalls)
	}
	for _, f := range []struct{ name, d string }{{"digest", b.Digest}, {"from_digest", b.FromDigest}} {
		if (f.d != "" || f.name == "digest") && !pkgfiles.ValidSHA256(f.d) {
			return nil, fmt.Errorf("bake.%s: %q is not 64 lower-case hex digits", f.name, f.d)
		}
	}
	return b, nil
}

// bakeFor is the bake an upgrade to digest records (InstallOptions.Bake
// completed with the version it replaces), or nil without one. An install
// that replaces nothing cannot bake: there is nothing to return to.
func (in *installer) bakeFor(digest string) *Bake {
	if in.opts.Bake == nil || !in.exists {
		return nil
	}
	b := in.opts.Bake.clone()
	b.Digest, b.FromVersion, b.FromDigest = digest, "", ""
	if in.cur != nil {
		b.FromVersion = in.cur.Manifest.Version.String()
	}
	if in.curDigest != nil {
		b.FromDigest = in.curDigest.Sum
	}
	return b
}

// checkBake refuses, before anything is written, a bake that is invalid
// or has no version to return to.
func (in *installer) checkBake() error {
	if in.opts.Bake == nil {
		return nil
	}
	if err := in.opts.Bake.Validate(); err != nil {
		return fmt.Errorf("install %s: %w", in.name, err)
	}
	if !in.exists {
		return fmt.Errorf("install %s: bake: the package is not installed: there is no version to return to", in.name)
	}
	return nil
}

// EndBake ends the bake of the package's version digest (Package.Bake):
// the version passed, and stays. It is a no-op when no bake of that
// version is recorded (another install or rollback replaced it).
func EndBake(home, name, digest string) error {
	return updateEntry(home, name, func(e *stateEntry) {
		if e.Bake != nil && e.Bake.Digest == digest {
			e.Bake = nil
		}
	})
}

// RollbackBake is Rollback for a bake that failed: it returns to the
// version the upgrade to digest replaced, and ends the bake, only while
// the package still runs that version under bake; otherwise it changes
// nothing and returns an error wrapping ErrBakeEnded.
func RollbackBake(home, name, digest string) (*InstallResult, error) {
	return rollback(home, name, func(e stateEntry) error {
		if e.Bake == nil || e.Bake.Digest != digest || e.Digest != digest {
			return fmt.Errorf("rollback %s: version %s: %w", name, short(digest), ErrBakeEnded)
		}
		return nil
	})
}

// short is the first 12 hex digits of a digest, for messages.
func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
