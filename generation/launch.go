package generation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// Launch is everything the host gives one package's sidecar, decided by the
// host before the build (package kernel computes it from its config): the
// policy, and what the sidecar starts with. Build applies it as it is, and
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
	Limits Limits
}

// Limits are resource limits for a plugin process, applied to it with
// prlimit(2) right after it starts, before the handshake; Linux only: on
// other systems non-zero limits fail the plugin's start before anything
// runs. Each limit sets both the soft and the hard value, so the plugin
// cannot raise it again; its children inherit it. Zero leaves a limit as
// the plugin inherited it from the host.
type Limits struct {
	// OpenFiles bounds the number of open file descriptors
	// (RLIMIT_NOFILE).
	OpenFiles uint64
	// AddressSpace bounds the process's virtual memory, in bytes
	// (RLIMIT_AS). A runtime that reserves address space up front (Go,
	// the JVM, V8) needs a few GiB of it.
	AddressSpace uint64
}

// DefaultLaunch is the launch value of a package Inputs.Launch has no entry
// for: the manifest's runtime.required, and nothing else.
func DefaultLaunch(p *pluginpkg.Package) Launch {
	return Launch{Required: p.Manifest != nil && p.Manifest.Runtime != nil && p.Manifest.Runtime.Required}
}

// launch returns the launch value of p.
func (in *Inputs) launch(p *pluginpkg.Package) Launch {
	if l, ok := in.Launch[p.Name]; ok {
		return l
	}
	return DefaultLaunch(p)
}

// sidecarPlugin is what the sidecar of p is started from: its runtime and
// what its manifest authorizes the handshake to declare, read from the
// manifest here, once, since the sidecar reads no manifest, with the kinds
// the host declares beyond the built-in ones (of kinds, the host spec's).
// The interceptor priority bounds are package contribution's.
func sidecarPlugin(p *pluginpkg.Package, kinds []contribution.KindSpec) sidecar.Plugin {
	m := p.Manifest
	out := sidecar.Plugin{Name: p.Name, Dir: p.Dir, ManifestPath: p.ManifestPath, Pin: p.Pin,
		MinPriority: contribution.MinPriority, MaxPriority: contribution.MaxPriority}
	if m.Version != nil {
		out.Version = m.Version.String()
	}
	if len(m.Provides) > 0 {
		out.Provides = make([]sidecar.Capability, len(m.Provides))
		for i, c := range m.Provides {
			out.Provides[i] = sidecar.Capability{Key: string(c.Key), Version: c.Version}
		}
	}
	if rt := m.Runtime; rt != nil {
		out.Command, out.Args, out.Env, out.HandshakeTimeout = rt.Command, rt.Args, rt.Env, rt.HandshakeTimeout
		out.Intercepts = idStrings(rt.Intercepts)
		out.Replaces = idStrings(rt.Replaces)
		out.Contributes = contributes(rt.Contributes)
	}
	out.Kinds = hostKinds(kinds)
	return out
}

func idStrings[T ~string](ids []T) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = string(id)
	}
	return out
}

// checkManifest returns why p's manifest alone rules out starting it: its
// kernel range rejects this host's protocol version, a *sidecar.StartError
// in PhaseVersion wrapping the *protocol.VersionError. Build makes the check
// before it hands the member to the batch, nil when it may start.
func checkManifest(p *pluginpkg.Package) error {
	if err := p.Manifest.CheckKernel(); err != nil {
		return &sidecar.StartError{Plugin: p.Name, Phase: sidecar.PhaseVersion, Err: err}
	}
	return nil
}

// memberOptions returns the options a member's client starts with: the
// build's common ones (base, see sidecarOptions) with the member's launch
// value.
func memberOptions(base sidecar.Options, l Launch) sidecar.Options {
	base.Config, base.Env, base.Limits = l.Config, l.Env, sidecar.Limits(l.Limits)
	return base
}

// launchDigest is Fingerprint.Config: the hex sha256 of the launch value's
// config, environment and limits, empty when it has none of them. A secret
// environment value is hashed on its own first (secretDigest). Without
// secrets the digest is the one earlier versions computed, so their
// snapshots compare equal.
func launchDigest(l Launch) string {
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
	return hex.EncodeToString(h.Sum(nil))
}

// launchExtra encodes the environment and the limits of l, secret values as
// their digest; nil when it has neither.
func launchExtra(l Launch) []byte {
	if len(l.Env) == 0 && l.Limits == (Limits{}) {
		return nil
	}
	env := make(map[string]string, len(l.Env))
	for name, v := range l.Env {
		if slices.Contains(l.SecretEnv, name) {
			v = secretDigest(v)
		}
		env[name] = v
	}
	// The field names are those of the encoding earlier versions hashed.
	type limits struct{ OpenFiles, AddressSpace uint64 }
	data, _ := json.Marshal(struct {
		Env    map[string]string `json:"env,omitempty"`
		Limits limits            `json:"limits"`
	}{env, limits{l.Limits.OpenFiles, l.Limits.AddressSpace}}) // maps marshal in key order
	return data
}

// secretDigest stands for a secret value in a fingerprint: a changed
// secret is a changed input, and the value is never stored.
func secretDigest(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "secret-sha256:" + hex.EncodeToString(sum[:])
}
