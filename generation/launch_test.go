package generation

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// oldDigest is Fingerprint.Config as versions before Launch computed it
// (config, then the host's env with secrets masked and the limits), so
// that snapshots they wrote still compare equal.
func oldDigest(config json.RawMessage, env map[string]string, secret map[string]bool, l pluginpkg.ResourceLimits) string {
	var extra []byte
	if len(env) > 0 || l != (pluginpkg.ResourceLimits{}) {
		masked := map[string]string{}
		for n, v := range env {
			masked[n] = v
			if secret[n] {
				masked[n] = "[REDACTED]"
			}
		}
		type limits struct{ OpenFiles, AddressSpace uint64 } // the limits of earlier versions
		extra, _ = json.Marshal(struct {
			Env    map[string]string `json:"env,omitempty"`
			Limits limits            `json:"limits"`
		}{masked, limits{l.OpenFiles, l.AddressSpace}})
	}
	if len(config) == 0 && len(extra) == 0 {
		return ""
	}
	h := sha256.New()
	h.Write(config)
	if len(extra) > 0 {
		h.Write([]byte{0})
		h.Write(extra)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestLaunchDigest checks that the fingerprint of a launch value without
// secrets is the one earlier versions wrote, that a secret value counts
// (by its digest, never in clear), and that every part of the value counts.
func TestLaunchDigest(t *testing.T) {
	const secret = "s3cr3t-value-0042"
	cfg := json.RawMessage(`{"verbose":true,"html":"<b>&"}`)
	env := map[string]string{"MODE": "strict", "URL": "http://x/?a=1&b=<2>"}
	lim := pluginpkg.ResourceLimits{OpenFiles: 64, AddressSpace: 1 << 32}
	tests := []struct {
		name string
		l    Launch
		old  string // the digest earlier versions computed, when equal
	}{
		{"empty", Launch{}, ""},
		{"required only", Launch{Required: true}, ""},
		{"config", Launch{Config: cfg}, oldDigest(cfg, nil, nil, pluginpkg.ResourceLimits{})},
		{"env", Launch{Env: env}, oldDigest(nil, env, nil, pluginpkg.ResourceLimits{})},
		{"limits", Launch{Limits: lim}, oldDigest(nil, nil, nil, lim)},
		{"all", Launch{Config: cfg, Env: env, Limits: lim}, oldDigest(cfg, env, nil, lim)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := launchDigest(tt.l); got != tt.old {
				t.Errorf("launchDigest = %q, want the earlier %q", got, tt.old)
			}
		})
	}

	withSecret := func(v string) Launch {
		return Launch{Env: map[string]string{"TOKEN": v, "MODE": "strict"}, SecretEnv: []string{"TOKEN"}}
	}
	a, b := launchDigest(withSecret(secret)), launchDigest(withSecret(secret+"x"))
	if a == b {
		t.Errorf("a changed secret value does not change the digest %q", a)
	}
	plain := Launch{Env: map[string]string{"TOKEN": secret, "MODE": "strict"}}
	if launchDigest(plain) == a {
		t.Error("a secret value hashes as the same value in clear")
	}
	if extra := string(launchExtra(withSecret(secret))); strings.Contains(extra, secret) || !strings.Contains(extra, "secret-sha256:") {
		t.Errorf("hashed encoding %s holds the secret, or not its digest", extra)
	}
}

// TestLaunchDigestLimitsMemo checks that the digest remembered for a
// launch value of limits (and a confinement mode) alone is given only for
// the same limits and mode and nothing else: every value of a sequence
// that alternates limits and modes and adds config, environment or grants
// digests as it does with nothing remembered.
func TestLaunchDigestLimitsMemo(t *testing.T) {
	a := pluginpkg.ResourceLimits{OpenFiles: 64, AddressSpace: 1 << 32, QueueBytes: 1 << 20}
	b := a
	b.QueueBytes++
	seq := []Launch{
		{Limits: a}, {Limits: b}, {Limits: a}, {Limits: a, Required: true},
		{Limits: a, Config: json.RawMessage(`{"x":1}`)},
		{Limits: a, Env: map[string]string{"MODE": "strict"}},
		{Limits: a, Confinement: pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire}},
		{Limits: a, Confinement: pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire}},
		{Limits: a, Confinement: pluginpkg.Confinement{Mode: pluginpkg.ConfineBestEffort}},
		{Limits: a, Confinement: pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire, Grants: &pluginpkg.Permissions{Connect: []string{"example.com:443"}}}},
		{Limits: a}, {}, {Limits: a},
	}
	for i, l := range seq {
		got := launchDigest(l)
		limitsDigest.Store(nil)
		if want := launchDigest(l); got != want {
			t.Errorf("value %d: digest %q after the values before it, %q with nothing remembered", i, got, want)
		}
		// Leave the memo as the sequence made it for the next value.
		for _, prev := range seq[:i+1] {
			launchDigest(prev)
		}
	}
	if launchDigest(Launch{Limits: a}) == launchDigest(Launch{Limits: b}) {
		t.Error("two limits digest the same")
	}
}
