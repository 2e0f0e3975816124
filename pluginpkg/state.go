package pluginpkg

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/jsonfile"
	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// StateFile is the name of the installed-state file in a home.
const StateFile = "state.json"

// StateFormatVersion is the state file format this build reads and writes.
const StateFormatVersion = 1

// MaxStateSize is the largest state file read, in bytes (docs/manifest.md). A
// larger file, or one that is not a regular file, is a *StateError.
const MaxStateSize = 4 << 20

// stateEntry is one package's state. A missing entry means enabled, unpinned.
// Digest is the FileDigest sum InstallSource recorded (recorded, never
// enforced: that is what a pin is for). Accepted is the permissions the
// operator accepted (Package.Accepted); nil when none is recorded.
// Origin is the artifact the package was installed from (Package.Origin),
// PreviousOrigin that of the version kept for Rollback. Bake is the
// upgrade's bake in progress (Package.Bake), nil when none is.
type stateEntry struct {
	Enabled        bool
	Pin            string
	Digest         string
	Accepted       *Permissions
	Origin         string
	PreviousOrigin string
	Bake           *Bake
}

// apply sets p's state fields from e.
func (e stateEntry) apply(p *Package) {
	p.Enabled, p.Pin, p.Digest, p.Accepted, p.Origin = e.Enabled, e.Pin, e.Digest, e.Accepted.Clone(), e.Origin
	p.Bake = nil
	if e.Bake != nil && e.Bake.Digest == e.Digest {
		p.Bake = e.Bake.clone()
	}
}

// stateEntryJSON is a stateEntry in the state file.
type stateEntryJSON struct {
	Enabled  bool             `json:"enabled"`
	Pin      string           `json:"pin,omitempty"`
	Digest   string           `json:"digest,omitempty"`
	Accepted *permissionsJSON `json:"accepted_permissions,omitempty"`
	Origin   string           `json:"origin,omitempty"`
	Previous string           `json:"previous_origin,omitempty"`
	Bake     *bakeJSON        `json:"bake,omitempty"`
}

// MarshalJSON writes e as the state file holds it.
func (e stateEntry) MarshalJSON() ([]byte, error) {
	return json.Marshal(stateEntryJSON{Enabled: e.Enabled, Pin: e.Pin, Digest: e.Digest, Accepted: toPermissionsJSON(e.Accepted),
		Origin: e.Origin, Previous: e.PreviousOrigin, Bake: toBakeJSON(e.Bake)})
}

// permissionsJSON is Permissions in the manifest's grammar, as the state
// file records accepted permissions. A nil list is left out.
type permissionsJSON struct {
	FS *struct {
		Read  []string `json:"read,omitempty"`
		Write []string `json:"write,omitempty"`
	} `json:"fs,omitempty"`
	Net *struct {
		Connect []string `json:"connect,omitempty"`
	} `json:"net,omitempty"`
	Exec []string `json:"exec,omitempty"`
}

// toPermissionsJSON converts p; nil for nil.
func toPermissionsJSON(p *Permissions) *permissionsJSON {
	if p == nil {
		return nil
	}
	out := &permissionsJSON{Exec: p.Exec}
	if len(p.Read)+len(p.Write) > 0 {
		out.FS = &struct {
			Read  []string `json:"read,omitempty"`
			Write []string `json:"write,omitempty"`
		}{p.Read, p.Write}
	}
	if len(p.Connect) > 0 {
		out.Net = &struct {
			Connect []string `json:"connect,omitempty"`
		}{p.Connect}
	}
	return out
}

// permissions converts j back; nil for nil.
func (j *permissionsJSON) permissions() *Permissions {
	if j == nil {
		return nil
	}
	p := &Permissions{Exec: j.Exec}
	if j.FS != nil {
		p.Read, p.Write = j.FS.Read, j.FS.Write
	}
	if j.Net != nil {
		p.Connect = j.Net.Connect
	}
	return p
}

// state is the decoded <home>/state.json.
type state struct {
	Format   int                   `json:"format"`
	Packages map[string]stateEntry `json:"packages"`
}

// entry returns name's state, defaulting to enabled.
func (s *state) entry(name string) stateEntry {
	if e, ok := s.Packages[name]; ok {
		return e
	}
	return stateEntry{Enabled: true}
}

// readState reads <home>/state.json. A missing file is an empty state (every
// package enabled). A file that cannot be decoded, breaks the schema, is
// larger than MaxStateSize or is not a regular file gives a *StateError.
func readState(home string) (*state, error) {
	path := filepath.Join(home, StateFile)
	data, err := homefile.Read(path, MaxStateSize)
	if errors.Is(err, fs.ErrNotExist) {
		return &state{Format: StateFormatVersion, Packages: map[string]stateEntry{}}, nil
	}
	var refused *homefile.Error
	if errors.As(err, &refused) {
		return nil, &StateError{Path: path, Reason: refused.Reason(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	return decodeState(path, data)
}

// rawState mirrors state with pointers, to tell missing fields from zero
// values.
type rawState struct {
	Format   *int `json:"format"`
	Packages map[string]struct {
		Enabled  *bool            `json:"enabled"`
		Pin      string           `json:"pin"`
		Digest   string           `json:"digest"`
		Accepted *permissionsJSON `json:"accepted_permissions"`
		Origin   string           `json:"origin"`
		Previous string           `json:"previous_origin"`
		Bake     *bakeJSON        `json:"bake"`
	} `json:"packages"`
}

func decodeState(path string, data []byte) (*state, error) {
	var raw rawState
	if err := jsonfile.Unmarshal(data, &raw, true); err != nil {
		var de *jsonfile.DecodeError
		errors.As(err, &de) // Unmarshal's errors are all *DecodeError
		return nil, &StateError{Path: path, Line: de.Line, Column: de.Column, Reason: de.Reason, Err: de.Err}
	}
	corrupt := func(format string, args ...any) error {
		return &StateError{Path: path, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case raw.Format == nil:
		return nil, corrupt("missing \"format\"")
	case *raw.Format > StateFormatVersion:
		return nil, corrupt("format %d needs a newer extkernel (this build reads %d)", *raw.Format, StateFormatVersion)
	case *raw.Format != StateFormatVersion:
		return nil, corrupt("unsupported format %d (this build reads %d)", *raw.Format, StateFormatVersion)
	}
	st := &state{Format: StateFormatVersion, Packages: make(map[string]stateEntry, len(raw.Packages))}
	for _, name := range slices.Sorted(maps.Keys(raw.Packages)) {
		e := raw.Packages[name]
		if e.Pin != "" && !pkgfiles.ValidPin(e.Pin) {
			return nil, corrupt("packages[%q].pin: %q is neither 64 lower-case hex digits nor \"package:<64 hex>:<64 hex>\"", name, e.Pin)
		}
		if e.Digest != "" && !pkgfiles.ValidSHA256(e.Digest) {
			return nil, corrupt("packages[%q].digest: %q is not 64 lower-case hex digits", name, e.Digest)
		}
		accepted := e.Accepted.permissions()
		var ve *ValidationError
		if err := accepted.Validate(); errors.As(err, &ve) {
			return nil, corrupt("packages[%q].accepted_permissions.%s", name, ve.Problems[0])
		}
		for f, o := range map[string]string{"origin": e.Origin, "previous_origin": e.Previous} {
			if o != "" && !validOrigin(o) {
				return nil, corrupt("packages[%q].%s: %q is not a reference by digest", name, f, o)
			}
		}
		bake, err := e.Bake.bake()
		if err != nil {
			return nil, corrupt("packages[%q].%v", name, err)
		}
		st.Packages[name] = stateEntry{Enabled: e.Enabled == nil || *e.Enabled, Pin: e.Pin, Digest: e.Digest, Accepted: accepted,
			Origin: e.Origin, PreviousOrigin: e.Previous, Bake: bake}
	}
	return st, nil
}

// writeStateLocked atomically replaces <home>/state.json with st: it writes a
// temporary file in the home, syncs it, renames it over the state file and
// syncs the directory. The caller holds the home lock.
func writeStateLocked(home string, st *state) error {
	st.Format = StateFormatVersion
	if st.Packages == nil {
		st.Packages = map[string]stateEntry{}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(home, ".state-*.json.tmp")
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(home, StateFile))
	}
	if err == nil {
		err = syncDir(home)
	}
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// syncDir fsyncs a directory so that a rename in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
