package config

import (
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/pluginpkg"
)

// TestActivationOf: a package's activation is the config's for its name,
// else the config's default, else its manifest's, else eager; its idle
// timeout is its own, else the top-level one.
func TestActivationOf(t *testing.T) {
	cfg, err := Parse("kernel.json", []byte(`{"format": 1,
  "activation": {"packages": {"pinned": "eager", "cold": "lazy"}},
  "idle_timeout": "5m", "idle_timeouts": {"cold": "30s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	pkg := func(name, activation string) *pluginpkg.Package {
		return &pluginpkg.Package{Name: name, Manifest: &pluginpkg.Manifest{Runtime: &pluginpkg.Runtime{Activation: activation}}}
	}
	tests := []struct {
		cfg  Config
		pkg  *pluginpkg.Package
		want string
	}{
		{cfg, pkg("plain", ""), pluginpkg.ActivationEager},
		{cfg, pkg("self-lazy", "lazy"), pluginpkg.ActivationLazy},
		{cfg, pkg("pinned", "lazy"), pluginpkg.ActivationEager},
		{cfg, pkg("cold", ""), pluginpkg.ActivationLazy},
		{Config{Activation: Activation{Default: "lazy"}}, pkg("any", "eager"), pluginpkg.ActivationLazy},
		{Config{Activation: Activation{Default: "lazy"}}, &pluginpkg.Package{Name: "decl", Manifest: &pluginpkg.Manifest{}}, pluginpkg.ActivationEager},
	}
	for _, tt := range tests {
		if got := tt.cfg.ActivationOf(tt.pkg); got != tt.want {
			t.Errorf("ActivationOf(%s) = %q, want %q", tt.pkg.Name, got, tt.want)
		}
	}
	for name, want := range map[string]time.Duration{"cold": 30 * time.Second, "other": 5 * time.Minute} {
		if got := cfg.IdleTimeoutOf(name); got != want {
			t.Errorf("IdleTimeoutOf(%s) = %v, want %v", name, got, want)
		}
	}
}

// TestActivationInvalid: a bad activation or timeout is an error naming
// its key.
func TestActivationInvalid(t *testing.T) {
	_, err := Parse("kernel.json", []byte(`{"format": 1,
  "activation": {"default": "soon", "packages": {"a": "later"}, "idle": 1},
  "idle_timeout": "-1s", "idle_timeouts": {"b": "x"}}`))
	if err == nil {
		t.Fatal("Parse accepted it")
	}
	for _, want := range []string{
		`activation.idle: unknown key`,
		`idle_timeouts.b:`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	err = Config{Activation: Activation{Default: "soon", Packages: map[string]string{"a": "later"}, IdleTimeout: -time.Second}}.Validate()
	for _, want := range []string{
		`activation.default: must be "eager" or "lazy", got "soon"`,
		`activation.packages.a: must be "eager" or "lazy", got "later"`,
		`idle_timeout: "-1s" is not a positive duration`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error lacks %q:\n%v", want, err)
		}
	}
}
