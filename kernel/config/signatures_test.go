package config

import (
	"path/filepath"
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
	  {"prefix": "oci://a/", "policy": "off", "identities": [{"issuer": "i", "subject": "s"}]}]}`))
	for _, want := range []string{
		`signatures[0].prefix: "ghcr.io/" must start with oci:// or oci-layout:`,
		`signatures[0].policy: must be "require", "warn" or "off", got "must"`,
		`signatures[1].keys: policy "require" needs at least one key`,
		`signatures[2].prefix: "oci://a/" is also signatures[1]'s`,
		`signatures[2].identities: keyless verification`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant %q", err, want)
		}
	}
}
