package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/distribute"
	"github.com/extkernel/extkernel/internal/sigtest"
)

// TestKeylessInstall: under a require policy trusting an identity and a
// trusted root file, install verifies an artifact signed with a
// certificate the root's CA issued to that identity and names it (text
// and --json); another subject, another issuer, an untrusted CA and an
// expired certificate are refused, naming what was found, with nothing
// written to the home; under warn the artifact is installed with a
// warning; a trusted root file that does not parse is an error naming it.
func TestKeylessInstall(t *testing.T) {
	buildDemo(t)
	const issuer, subject = "https://idp.acme.example", "release@acme.example"
	work := t.TempDir()
	ca, other := sigtest.NewCA(t, "acme CA"), sigtest.NewCA(t, "other CA")
	sigtest.WriteTrustedRoot(t, filepath.Join(work, "trusted_root.json"), sigtest.Root{CAs: []*sigtest.CA{ca}})
	os.WriteFile(filepath.Join(work, "bad_root.json"), []byte(`{"mediaType": 1}`), 0o644)
	artifact := func(name string, signer *sigtest.CA, id sigtest.Identity) string {
		var p packOutput
		kctlJSON(t, 0, &p, "pack", kvPackage(t, "1.4.0"), "-o", filepath.Join(work, name+".oci"))
		key, cert := signer.Issue(t, id)
		s, err := distribute.NewCertificateSigner(key, cert)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := distribute.Sign(context.Background(), p.Layout, p.Tag, s); err != nil {
			t.Fatal(err)
		}
		return p.Reference
	}
	good := artifact("good", ca, sigtest.Identity{Issuer: issuer, Subject: subject})
	otherSubject := artifact("other-subject", ca, sigtest.Identity{Issuer: issuer, Subject: "mallory@acme.example"})
	for _, tc := range []struct {
		name, ref, policy, root string
		code                    int
		want                    string // in stdout when code is 0, else in stderr
	}{
		{"trusted identity", good, "require", "trusted_root.json", 0, "  signature verified: signed by issuer " + issuer + " subject " + subject + "\n"},
		{"another subject", otherSubject, "require", "trusted_root.json", 1,
			`no signature verifies: issuer "` + issuer + `" subject "mallory@acme.example" is not a trusted identity (policy require for "oci-layout:" trusts issuer "` + issuer + `" subject "` + subject + `" (trusted root ` + filepath.Join(work, "trusted_root.json") + `))`},
		{"another issuer", artifact("other-issuer", ca, sigtest.Identity{Issuer: "https://idp.evil.example", Subject: subject}), "require", "trusted_root.json", 1,
			`issuer "https://idp.evil.example" subject "` + subject + `" is not a trusted identity`},
		{"untrusted CA", artifact("untrusted-ca", other, sigtest.Identity{Issuer: issuer, Subject: subject}), "require", "trusted_root.json", 1,
			`signed by a certificate no trusted root issued (issuer "` + issuer + `" subject "` + subject + `")`},
		{"expired certificate", artifact("expired", ca, sigtest.Identity{Issuer: issuer, Subject: subject,
			NotBefore: time.Now().Add(-72 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)}), "require", "trusted_root.json", 1,
			`the certificate of issuer "` + issuer + `" subject "` + subject + `" expired at `},
		{"another subject under warn", otherSubject, "warn", "trusted_root.json", 0,
			`  signature unverified: no signature verifies: issuer "` + issuer + `" subject "mallory@acme.example" is not a trusted identity`},
		{"a trusted root that does not parse", good, "require", "bad_root.json", 1,
			`signature policy "oci-layout:": trusted root ` + filepath.Join(work, "bad_root.json") + `: failed to proto-json unmarshal trusted root`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg, home := filepath.Join(work, strings.ReplaceAll(tc.name, " ", "-")+".json"), filepath.Join(dir, "home")
			os.WriteFile(cfg, []byte(`{"format": 1, "home": "`+home+`", "signatures": [{"prefix": "oci-layout:", "policy": "`+tc.policy+`",
  "identities": [{"issuer": "`+issuer+`", "subject": "`+subject+`"}], "trusted_root": "`+tc.root+`"}]}`), 0o644)
			code, out, errOut := kctl("install", tc.ref, "--config", cfg)
			got := out
			if tc.code != 0 {
				got = errOut
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Fatalf("exit %d, want %d with %q\n%s%s", code, tc.code, tc.want, out, errOut)
			}
			if _, err := os.Stat(home); tc.code != 0 && !os.IsNotExist(err) {
				t.Error("the refused install wrote to the home")
			}
		})
	}
	var inst installOutput
	kctlJSON(t, 0, &inst, "install", good, "--config", filepath.Join(work, "trusted-identity.json"), "--home", filepath.Join(t.TempDir(), "home"))
	if want := "verified: signed by issuer " + issuer + " subject " + subject; inst.Signature != want {
		t.Errorf("--json signature %q, want %q", inst.Signature, want)
	}
}
