package generation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
)

// Fingerprint is what identifies one member's inputs: if any field differs
// between two generations, the member's sidecar must be restarted.
type Fingerprint struct {
	Version string `json:"version"`
	// Manifest is the hex sha256 of the manifest file.
	Manifest string `json:"manifest"`
	// Executable identifies the runtime executable: its pinned sha256 when
	// the package is pinned, else "size:<bytes>,mtime:<unix ns>" (cheap to
	// compute on every reload), "missing: <error>" when it cannot be
	// found, and empty for declarative packages.
	Executable string `json:"executable,omitempty"`
	// Config is the hex sha256 of the effective config, empty when none.
	Config   string `json:"config,omitempty"`
	Required bool   `json:"required"`
}

// PackageFingerprint computes the fingerprint of one package under the
// given policy and effective config.
// extra holds further host-side inputs hashed with config (Inputs.Extra).
func PackageFingerprint(m *Member, config json.RawMessage, extra []byte) Fingerprint {
	p := m.Package
	f := Fingerprint{Version: p.Manifest.Version.String(), Manifest: p.ManifestSHA256, Required: m.Required}
	if len(config) > 0 || len(extra) > 0 {
		h := sha256.New()
		h.Write(config)
		if len(extra) > 0 {
			h.Write([]byte{0})
			h.Write(extra)
		}
		f.Config = hex.EncodeToString(h.Sum(nil))
	}
	if p.Manifest.Runtime == nil {
		return f
	}
	if p.Pin != "" {
		f.Executable = "sha256:" + p.Pin
		return f
	}
	path, err := p.CommandLocation()
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(path); err == nil {
			f.Executable = fmt.Sprintf("size:%d,mtime:%d", fi.Size(), fi.ModTime().UnixNano())
			return f
		}
	}
	f.Executable = "missing: " + err.Error()
	return f
}

func fingerprints(members []*Member, in Inputs) map[string]Fingerprint {
	out := make(map[string]Fingerprint, len(members))
	for _, m := range members {
		var cfg json.RawMessage
		var extra []byte
		if in.Config != nil {
			cfg = in.Config(m.Package.Name)
		}
		if in.Extra != nil {
			extra = in.Extra(m.Package.Name)
		}
		out[m.Package.Name] = PackageFingerprint(m, cfg, extra)
	}
	return out
}

// hashInputs hashes the member fingerprints and the host's side of the
// inputs in a canonical order. Fields are written with separators that
// cannot occur in them (NUL, newline), without encoding: a reload hashes
// every member's inputs, so this is on its path.
func hashInputs(fps map[string]Fingerprint, in Inputs) string {
	h := sha256.New()
	field := func(s string) {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	for _, name := range sortedNames(fps) {
		f := fps[name]
		field(name)
		field(f.Version)
		field(f.Manifest)
		field(f.Executable)
		field(f.Config)
		field(strconv.FormatBool(f.Required))
		h.Write([]byte{'\n'})
	}
	host := make([]string, 0, len(in.Host))
	for _, c := range in.Host {
		host = append(host, string(c.Key)+"@"+c.Version.String())
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
		h.Write([]byte{'\n'})
	}
	field(strconv.FormatBool(in.Spec.Strict))
	return hex.EncodeToString(h.Sum(nil))
}
