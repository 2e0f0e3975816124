package sidecar

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

func TestAnsweredProtocolVersion(t *testing.T) {
	tests := []struct {
		answered, upgrade string
		ok                bool
	}{
		{protocol.Version, "", true},
		{"1.7.2", "", true},
		{"2.0.0", "host", false},
		{"0.9.0", "plugin", false},
		{"one", "", false},
		{"v1", "", true},
		{"1.2", "", true},
		{"v2.1", "host", false},
		{"1.0.0-rc.1+build.5", "", true},
		{"2.0.0-rc.1", "host", false},
	}
	// The error names what the plugin answered; the *StartError wrapping it
	// names the plugin (TestStartFaults, "bad-version").
	for _, tt := range tests {
		_, err := checkProtocolVersion(tt.answered)
		var ve *protocol.VersionError
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s: err = %v, want accepted", tt.answered, err)
		case !tt.ok && err == nil:
			t.Errorf("%s: accepted", tt.answered)
		case tt.upgrade != "" && (!errors.As(err, &ve) || ve.Upgrade != tt.upgrade || !strings.Contains(ve.Error(), "plugin wants protocol "+tt.answered+" but")):
			t.Errorf("%s: err = %v, want upgrade the %s", tt.answered, err, tt.upgrade)
		}
	}
}

// TestAnsweredProtocolVersionAsNewVersion checks that an answer is
// accepted exactly when semver.NewVersion reads it with the host's major
// (checkProtocolVersion parses strict versions without it).
func TestAnsweredProtocolVersionAsNewVersion(t *testing.T) {
	host := semver.MustParse(protocol.Version)
	for _, answered := range []string{
		protocol.Version, "1.0.0", "1.99.3", "v1.0.0", "V1.0.0", "1", "1.0", "01.0.0", "1.00.0", "1.0.0-", "1.0.0-01",
		"1.0.0-rc.1", "1.0.0+meta", "1.0.0-rc.1+meta", "1.0.0+", "1..0", "1.0.0.0", " 1.0.0", "1.0.0 ", "",
		"2.0.0", "0.1.0", "18446744073709551616.0.0", "1.18446744073709551616.0", "1.0.0-a..b", "1.0.0-ü",
	} {
		v, err := semver.NewVersion(answered)
		want := err == nil && v.Major() == host.Major()
		if _, cerr := checkProtocolVersion(answered); (cerr == nil) != want {
			t.Errorf("%q: accepted = %v, semver.NewVersion: %v (err %v)", answered, cerr == nil, want, err)
		}
	}
}

func TestBuildEnv(t *testing.T) {
	host := map[string]string{"PATH": "/bin", "HOME": "/home/u", "SECRET": "x", "LANG": "C"}
	lookup := func(k string) (string, bool) { v, ok := host[k]; return v, ok }
	rt := &pluginpkg.Runtime{Command: "./p", Env: map[string]string{"LANG": "fr_FR.UTF-8", "MODE": "fast"}}
	p := &pluginpkg.Package{Name: "p", Dir: "/pkgs/p", Manifest: &pluginpkg.Manifest{Name: "p", Version: semver.MustParse("1.2.3"), Runtime: rt}}
	c := newClient(p, Options{Env: map[string]string{"HOST_TOKEN": "t", "MODE": "host"}})
	got := c.buildEnv("/data/p", lookup)
	want := []string{
		"EXTKERNEL_DATA_DIR=/data/p",
		"EXTKERNEL_PLUGIN_DIR=/pkgs/p",
		"EXTKERNEL_PLUGIN_NAME=p",
		"EXTKERNEL_PLUGIN_VERSION=1.2.3",
		"EXTKERNEL_PROTOCOL_VERSION=" + protocol.Version,
		"HOME=/home/u",
		"HOST_TOKEN=t",
		"LANG=fr_FR.UTF-8",
		"MODE=host",
		"PATH=/bin",
	}
	if !slices.Equal(got, want) {
		t.Errorf("env =\n%q\nwant\n%q", got, want)
	}
}
