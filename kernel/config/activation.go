package config

import (
	"maps"
	"slices"
	"time"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Activation says when the kernel starts each plugin and when it stops an
// idle one (config keys activation and idle_timeout; docs/config.md,
// "Activation"). The zero value starts every plugin as its manifest says
// (eager unless runtime.activation is "lazy") and never stops an idle
// one.
type Activation struct {
	// Default is the activation of every package without its own in
	// Packages, over its manifest's runtime.activation:
	// pluginpkg.ActivationEager or ActivationLazy; "" keeps the
	// manifest's.
	Default string
	// Packages overrides Default (and the manifest) per package name.
	Packages map[string]string
	// IdleTimeout stops a lazy member after it has been idle that long:
	// no call in flight either way, no stream open, nothing pending
	// (config key idle_timeout; zero, the default, never stops one). It
	// starts again on its next use.
	IdleTimeout time.Duration
	// IdleTimeouts overrides IdleTimeout per package name; zero keeps
	// that package running once started.
	IdleTimeouts map[string]time.Duration
}

// ActivationOf returns the activation of p: the config's, for p's name or
// its default, else its manifest's runtime.activation, else eager. A
// package without runtime is eager (it has nothing to start).
func (c *Config) ActivationOf(p *pluginpkg.Package) string {
	if p.Manifest == nil || p.Manifest.Runtime == nil {
		return pluginpkg.ActivationEager
	}
	if a, ok := c.Activation.Packages[p.Name]; ok && a != "" {
		return a
	}
	if c.Activation.Default != "" {
		return c.Activation.Default
	}
	if a := p.Manifest.Runtime.Activation; a != "" {
		return a
	}
	return pluginpkg.ActivationEager
}

// IdleTimeoutOf returns how long the lazy member name may stay idle
// before it is stopped; zero means never.
func (c *Config) IdleTimeoutOf(name string) time.Duration {
	if d, ok := c.Activation.IdleTimeouts[name]; ok {
		return d
	}
	return c.Activation.IdleTimeout
}

// activation checks the activations and idle timeouts of a.
func (ck *checker) activation(a Activation) {
	ck.activationValue("activation.default", a.Default)
	for _, name := range slices.Sorted(maps.Keys(a.Packages)) {
		ck.activationValue("activation.packages."+name, a.Packages[name])
	}
	ck.duration("idle_timeout", a.IdleTimeout)
	for _, name := range slices.Sorted(maps.Keys(a.IdleTimeouts)) {
		ck.duration("idle_timeouts."+name, a.IdleTimeouts[name])
	}
}

// activationValue refuses anything but "", eager and lazy.
func (ck *checker) activationValue(path, v string) {
	if v != "" && v != pluginpkg.ActivationEager && v != pluginpkg.ActivationLazy {
		ck.add(path, "must be %q or %q, got %q", pluginpkg.ActivationEager, pluginpkg.ActivationLazy, v)
	}
}
