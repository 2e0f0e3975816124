package config

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSignatures: keys resolve against the file's directory, the longest
// prefix wins, and every problem is named by its path.
func TestSignatures(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Parse(filepath.Join(dir, "kernel.json"), []byte(`{"format": 1, "signatures": [
	  {"prefix": "oci://ghcr.io/", "policy": "warn", "keys": ["keys/all.pub"]},
	  {"prefix": "oci://ghcr.io/acme/", "policy": "require", "keys": ["keys/acme.pub", "/etc/k.pub"]},
	  {"prefix": "oci-layout:", "policy": "off"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.SignaturePolicyFor("oci://ghcr.io/acme/hello:1.0.0")
	if p == nil || p.Policy != SignaturesRequire || p.Keys[0] != filepath.Join(dir, "keys", "acme.pub") || p.Keys[1] != "/etc/k.pub" {
		t.Fatalf("policy %+v", p)
	}
	if p := cfg.SignaturePolicyFor("oci://ghcr.io/other/x:1"); p == nil || p.Policy != SignaturesWarn {
		t.Errorf("policy %+v", p)
	}
	if p := cfg.SignaturePolicyFor("oci://quay.io/x:1"); p != nil {
		t.Errorf("policy %+v for an unmatched prefix", p)
	}
	_, err = Parse("k.json", []byte(`{"format": 1, "signatures": [
	  {"prefix": "ghcr.io/", "policy": "must"},
	  {"prefix": "oci://a/", "policy": "require"},
	  {"prefix": "oci://a/", "policy": "off", "identities": [{"issuer": "i", "subject": "s"}]},
	  {"prefix": "oci://b/", "policy": "require", "trusted_root": "root.json", "identities": [{"issuer": "i", "subject": "s"}, {"subject": "s"}, {"issuer": "i"}]},
	  {"prefix": "oci://c/", "policy": "require", "keys": ["c.pub"], "trusted_root": "root.json"}]}`))
	want := []string{
		`signatures[0].prefix: "ghcr.io/" must start with oci:// or oci-layout:`,
		`signatures[0].policy: must be "require", "warn" or "off", got "must"`,
		`signatures[1].keys: policy "require" needs at least one key or identity`,
		`signatures[2].prefix: "oci://a/" is also signatures[1]'s`,
		`signatures[2].trusted_root: missing: identities are verified against a Sigstore trusted root file (trusted_root.json) that the policy names`,
		`signatures[3].identities[1].issuer: missing`,
		`signatures[3].identities[2].subject: missing`,
		`signatures[4].trusted_root: a trusted root verifies identities only, and the policy lists none: add identities (issuer and subject) or remove it (keys need no trusted root)`,
	}
	if err == nil || err.Error() != "k.json: "+strings.Join(want, "\nk.json: ") {
		t.Errorf("err =\n%v\nwant\nk.json: %s", err, strings.Join(want, "\nk.json: "))
	}
}

// TestKeylessSignatures: identities with a trusted root are accepted, the
// root resolved against the file's directory; a policy may trust keys
// and identities together.
func TestKeylessSignatures(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Parse(filepath.Join(dir, "kernel.json"), []byte(`{"format": 1, "signatures": [
	  {"prefix": "oci://ghcr.io/acme/", "policy": "require", "keys": ["keys/acme.pub"], "trusted_root": "keys/trusted_root.json",
	   "identities": [{"issuer": "https://token.actions.githubusercontent.com", "subject": "https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main"},
	                  {"issuer": "https://accounts.google.com", "subject": "release@acme.example"}]},
	  {"prefix": "oci-layout:", "policy": "warn", "trusted_root": "/etc/extkernel/trusted_root.json", "identities": [{"issuer": "https://idp.example", "subject": "ci@example.com"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.SignaturePolicyFor("oci://ghcr.io/acme/hello:1.0.0")
	want := []SignatureIdentity{
		{"https://token.actions.githubusercontent.com", "https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main"},
		{"https://accounts.google.com", "release@acme.example"},
	}
	if p == nil || p.TrustedRoot != filepath.Join(dir, "keys", "trusted_root.json") || !slices.Equal(p.Identities, want) || len(p.Keys) != 1 {
		t.Fatalf("policy %+v", p)
	}
	if p := cfg.SignaturePolicyFor("oci-layout:/srv/x.oci:1"); p == nil || p.TrustedRoot != "/etc/extkernel/trusted_root.json" || len(p.Keys) != 0 {
		t.Errorf("policy %+v", p)
	}
}
