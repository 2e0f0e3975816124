package generation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync/atomic"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Launch is everything the host gives one package's sidecar, decided by the
// host before the build (package kernel computes it from its config): the
// policy, and what the sidecar starts with. The build applies it as it is, and
// the member's fingerprint hashes exactly this value (Fingerprint.Config,
// Fingerprint.Required), so what runs and what a plan compares cannot
// drift apart.
type Launch struct {
	// Required makes the package's failure fail the build; a package
	// without runtime is never required.
	Required bool
	// Config is the package's effective configuration, sent in initialize.
	Config json.RawMessage
	// Env holds environment variables set over the manifest's env.
	Env map[string]string
	// SecretEnv names the entries of Env whose values are secret: a
	// fingerprint holds only a digest of them, never the value.
	SecretEnv []string
	// Limits are the process's resource limits.
	Limits pluginpkg.ResourceLimits
	// Confinement is how the process is confined to its permissions.
	Confinement pluginpkg.Confinement
	// Activation is pluginpkg.ActivationLazy for a member started on
	// first use; "" or ActivationEager starts it with its generation. It
	// is not hashed (the process is given nothing different): a plan
	// compares it on its own (SnapshotPackage.Activation), and a change
	// reloads the package.
	Activation string
}

// lazyName is l's activation as a snapshot records it: "lazy", or "" for
// eager.
func (l Launch) lazyName() string {
	if l.Activation == pluginpkg.ActivationLazy {
		return pluginpkg.ActivationLazy
	}
	return ""
}

// DefaultLaunch is the launch value of a package Inputs.Launch has no entry
// for: the manifest's runtime.required and runtime.activation, and nothing
// else.
func DefaultLaunch(p *pluginpkg.Package) Launch {
	if p.Manifest == nil || p.Manifest.Runtime == nil {
		return Launch{}
	}
	return Launch{Required: p.Manifest.Runtime.Required, Activation: p.Manifest.Runtime.Activation}
}

// launchDigest is Fingerprint.Config: the hex sha256 of the launch value's
// config, environment and limits, empty when it has none of them. A secret
// environment value is hashed on its own first (secretDigest). Without
// secrets the digest is the one earlier versions computed, so their
// snapshots compare equal.
func launchDigest(l Launch) string {
	onlyLimits := len(l.Config) == 0 && len(l.Env) == 0 && l.Confinement.Grants.Empty() && l.Confinement.Denies.Empty()
	if onlyLimits {
		if m := limitsDigest.Load(); m != nil && m.limits == l.Limits && m.mode == l.Confinement.Mode {
			return m.digest
		}
	}
	extra := launchExtra(l)
	if len(l.Config) == 0 && len(extra) == 0 {
		return ""
	}
	h := sha256.New()
	h.Write(l.Config)
	if len(extra) > 0 {
		h.Write([]byte{0})
		h.Write(extra)
	}
	d := hex.EncodeToString(h.Sum(nil))
	if onlyLimits {
		limitsDigest.Store(&limitsMemo{limits: l.Limits, mode: l.Confinement.Mode, digest: d})
	}
	return d
}

// limitsDigest is the launch digest last computed of a launch value with
// limits and a confinement mode and nothing else (no config, environment,
// grants or denies), whose digest depends on those two alone: a host
// gives most of its members the same defaults, so they share one encoding
// and hash.
var limitsDigest atomic.Pointer[limitsMemo]

// limitsMemo is one limitsDigest entry.
type limitsMemo struct {
	limits pluginpkg.ResourceLimits
	mode   string
	digest string
}

// launchExtra encodes the environment and the limits of l, secret values as
// their digest; nil when it has neither.
func launchExtra(l Launch) []byte {
	if len(l.Env) == 0 && l.Limits == (pluginpkg.ResourceLimits{}) && confinementZero(l.Confinement) {
		return nil
	}
	env := make(map[string]string, len(l.Env))
	for name, v := range l.Env {
		if slices.Contains(l.SecretEnv, name) {
			v = secretDigest(v)
		}
		env[name] = v
	}
	// The field names are those of the encoding earlier versions hashed;
	// the bounds added since are left out when zero (their defaults), so
	// a launch value without them hashes as before.
	type limits struct {
		OpenFiles, AddressSpace uint64
		QueueBytes              uint64 `json:",omitempty"`
		StreamWindowBytes       uint64 `json:",omitempty"`
		LogLinesPerSecond       uint64 `json:",omitempty"`
		MalformedMessages       uint64 `json:",omitempty"`
	}
	// A confinement is hashed only when set, for the same reason.
	// (A copy: the address of l's own field would move every caller's
	// whole launch value to the heap, the common empty case's included.)
	var conf *pluginpkg.Confinement
	if !confinementZero(l.Confinement) {
		c := l.Confinement
		conf = &c
	}
	data, _ := json.Marshal(struct {
		Env         map[string]string      `json:"env,omitempty"`
		Limits      limits                 `json:"limits"`
		Confinement *pluginpkg.Confinement `json:"confinement,omitempty"`
	}{env, limits(l.Limits), conf}) // maps marshal in key order
	return data
}

// confinementZero reports whether c confines nothing and says nothing:
// no mode (or off) and no grants or denies.
func confinementZero(c pluginpkg.Confinement) bool {
	return (c.Mode == "" || c.Mode == pluginpkg.ConfineOff) && c.Grants.Empty() && c.Denies.Empty()
}

// secretDigest stands for a secret value in a fingerprint: a changed
// secret is a changed input, and the value is never stored.
func secretDigest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "secret-sha256:" + hex.EncodeToString(sum[:])
}
