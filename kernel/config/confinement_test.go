package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// TestConfinementOf: a package's mode is its own or the default; its
// grants and denies are its own with those for every package.
func TestConfinementOf(t *testing.T) {
	cfg, err := Parse("kernel.json", []byte(`{"format": 1,
  "confinement": {"default": "require", "packages": {"legacy": "off"},
    "grants": {"memory": {"fs": {"read": ["${workspace}"]}, "net": {"connect": ["*:443"]}}},
    "denies": {"*": {"fs": {"read": ["/root/.ssh"]}}, "memory": {"exec": ["sh"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.ConfinementOf("memory")
	want := pluginpkg.Confinement{Mode: "require",
		Grants: &pluginpkg.Permissions{Read: []string{"${workspace}"}, Connect: []string{"*:443"}},
		Denies: &pluginpkg.Permissions{Read: []string{"/root/.ssh"}, Exec: []string{"sh"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("memory: %+v %+v %+v, want %+v %+v %+v", got, got.Grants, got.Denies, want, want.Grants, want.Denies)
	}
	if got := cfg.ConfinementOf("legacy"); got.Mode != "off" || got.Grants != nil || !reflect.DeepEqual(got.Denies, &pluginpkg.Permissions{Read: []string{"/root/.ssh"}}) {
		t.Errorf("legacy: %+v", got)
	}
}

// TestConfinementInvalid: a bad mode or entry is an error naming its key.
func TestConfinementInvalid(t *testing.T) {
	_, err := Parse("kernel.json", []byte(`{"format": 1,
  "confinement": {"default": "strict", "packages": {"a": "maybe"},
    "grants": {"a": {"fs": {"read": ["home/.ssh"]}}}, "denies": {"*": {"net": {"connect": ["example.com"]}}}}}`))
	if err == nil {
		t.Fatal("Parse accepted it")
	}
	for _, want := range []string{
		`confinement.default: unknown confinement "strict"`,
		`confinement.packages.a: unknown confinement "maybe"`,
		`confinement.grants.a.fs.read[0]: "home/.ssh": must be absolute`,
		`confinement.denies.*.net.connect[0]: "example.com": must be "host:port"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
