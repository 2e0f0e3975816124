package distribute

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"oras.land/oras-go/v2/content/oci"

	"github.com/extkernel/extkernel/internal/sigtest"
	"github.com/extkernel/extkernel/kernel/config"
)

// The identities the keyless tests trust: an e-mail address of a private
// identity provider, and a GitHub workflow (a URI).
const (
	acmeIssuer   = "https://idp.acme.example"
	acmeSubject  = "release@acme.example"
	githubIssuer = "https://token.actions.githubusercontent.com"
	workflow     = "https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main"
)

var trustedIDs = []config.SignatureIdentity{{Issuer: acmeIssuer, Subject: acmeSubject}, {Issuer: githubIssuer, Subject: workflow}}

// certLayout packs a package into a new layout and signs it with key and
// its certificate cert; it returns the pack.
func certLayout(t testing.TB, dir, version string, key *ecdsa.PrivateKey, cert *x509.Certificate) *Packed {
	t.Helper()
	p := signedLayout(t, dir, version, "")
	s, err := NewCertificateSigner(key, cert)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sign(context.Background(), dir, p.Tag, s); err != nil {
		t.Fatal(err)
	}
	return p
}

// keylessPolicy loads a policy trusting the keys pubs and the identities
// trustedIDs under the trusted root file rootPath.
func keylessPolicy(t testing.TB, mode, rootPath string, pubs ...string) *Policy {
	t.Helper()
	p, err := LoadPolicy(config.SignaturePolicy{Prefix: "oci", Policy: mode, Keys: pubs, Identities: trustedIDs, TrustedRoot: rootPath})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chainLayout packs a package into a new layout signed with a
// certificate that inter issued, attached as a bundle whose verification
// material is the chain [leaf, inter's certificate].
func chainLayout(t *testing.T, dir string, inter *sigtest.CA) *Packed {
	t.Helper()
	p := signedLayout(t, dir, "1.0.0", "")
	key, cert := inter.Issue(t, sigtest.Identity{Issuer: acmeIssuer, Subject: acmeSubject})
	s, err := NewCertificateSigner(key, cert)
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := os.ReadFile(filepath.Join(dir, "blobs", "sha256", p.Manifest.Digest.Encoded()))
	b, err := s.signBundle(manifest)
	if err != nil {
		t.Fatal(err)
	}
	b.VerificationMaterial.Content = &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{
		Certificates: []*protocommon.X509Certificate{{RawBytes: cert.Raw}, {RawBytes: inter.Cert.Raw}}}}
	data, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	store, _ := oci.New(dir)
	if _, err := attach(context.Background(), store, p.Manifest, data); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestKeylessSignatures: an artifact signed with a certificate a trusted
// root's CA issued to a trusted identity verifies, naming the identity;
// another subject, another issuer, a certificate of an untrusted CA, an
// expired one, a signature of another digest, and a certificate lacking
// what the root's logs require are refused under require, naming what
// was found and the policy; warn installs with a warning; a policy with
// keys and identities verifies either.
func TestKeylessSignatures(t *testing.T) {
	ctx := context.Background()
	work := t.TempDir()
	ca, other := sigtest.NewCA(t, "acme CA"), sigtest.NewCA(t, "other CA")
	rootFile, tlogRoot, ctRoot := filepath.Join(work, "trusted_root.json"), filepath.Join(work, "tlog_root.json"), filepath.Join(work, "ct_root.json")
	sigtest.WriteTrustedRoot(t, rootFile, sigtest.Root{CAs: []*sigtest.CA{ca}})
	sigtest.WriteTrustedRoot(t, tlogRoot, sigtest.Root{CAs: []*sigtest.CA{ca}, TransparencyLog: true})
	sigtest.WriteTrustedRoot(t, ctRoot, sigtest.Root{CAs: []*sigtest.CA{ca}, CTLog: true})
	layout := func(name string, signer *sigtest.CA, id sigtest.Identity) string {
		key, cert := signer.Issue(t, id)
		return certLayout(t, filepath.Join(work, name+".oci"), "1.0.0", key, cert).Reference()
	}
	good := layout("good", ca, sigtest.Identity{Issuer: acmeIssuer, Subject: acmeSubject})
	workflowV1 := layout("workflow", ca, sigtest.Identity{Issuer: githubIssuer, Subject: workflow, V1: true})
	otherSubject := layout("other-subject", ca, sigtest.Identity{Issuer: acmeIssuer, Subject: "mallory@acme.example"})
	otherIssuer := layout("other-issuer", ca, sigtest.Identity{Issuer: "https://idp.evil.example", Subject: acmeSubject})
	untrustedCA := layout("untrusted-ca", other, sigtest.Identity{Issuer: acmeIssuer, Subject: acmeSubject})
	expired := layout("expired", ca, sigtest.Identity{Issuer: acmeIssuer, Subject: acmeSubject,
		NotBefore: time.Now().Add(-72 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	chain := chainLayout(t, filepath.Join(work, "chain.oci"), ca.Intermediate(t, "acme intermediate")).Reference()
	priv, pub := newKey(t, work, "acme")
	keySigned := signedLayout(t, filepath.Join(work, "key.oci"), "1.0.0", priv).Reference()
	// another artifact's signature: v1's, by a trusted identity, claimed for v2.
	mixed := filepath.Join(work, "mixed.oci")
	v1, v2 := signedLayout(t, mixed, "1.0.0", ""), signedLayout(t, mixed, "2.0.0", "")
	key, cert := ca.Issue(t, sigtest.Identity{Issuer: acmeIssuer, Subject: acmeSubject})
	s, _ := NewCertificateSigner(key, cert)
	v1Bytes, _ := os.ReadFile(filepath.Join(mixed, "blobs", "sha256", v1.Manifest.Digest.Encoded()))
	b, _ := s.signBundle(v1Bytes)
	bundleJSON, _ := b.MarshalJSON()
	store, _ := oci.New(mixed)
	if _, err := attach(ctx, store, v2.Manifest, bundleJSON); err != nil {
		t.Fatal(err)
	}

	require := keylessPolicy(t, config.SignaturesRequire, rootFile)
	both := keylessPolicy(t, config.SignaturesRequire, rootFile, pub)
	trusted := `issuer "` + acmeIssuer + `" subject "` + acmeSubject + `", issuer "` + githubIssuer + `" subject "` + workflow + `"`
	for _, tc := range []struct {
		name, ref string
		policy    *Policy
		want      string    // an error; "warn:" prefix: a warning
		verified  *Verified // when it verifies
	}{
		{"trusted identity", good, require, "", &Verified{Signed: true, Issuer: acmeIssuer, Subject: acmeSubject}},
		{"trusted workflow, v1 issuer extension, URI subject", workflowV1, require, "", &Verified{Signed: true, Issuer: githubIssuer, Subject: workflow}},
		{"certificate chain in the bundle", chain, require, "", &Verified{Signed: true, Issuer: acmeIssuer, Subject: acmeSubject}},
		{"keys and identities: a certificate", good, both, "", &Verified{Signed: true, Issuer: acmeIssuer, Subject: acmeSubject}},
		{"keys and identities: a key", keySigned, both, "", &Verified{Signed: true, Key: pub, Hint: hintOf(t, pub)}},
		{"another subject", otherSubject, require, `no signature verifies: issuer "` + acmeIssuer + `" subject "mallory@acme.example" is not a trusted identity (policy require for "oci" trusts ` + trusted + ` (trusted root ` + rootFile + `))`, nil},
		{"another issuer", otherIssuer, require, `issuer "https://idp.evil.example" subject "` + acmeSubject + `" is not a trusted identity`, nil},
		{"untrusted CA", untrustedCA, require, `signed by a certificate no trusted root issued (issuer "` + acmeIssuer + `" subject "` + acmeSubject + `")`, nil},
		{"expired certificate", expired, require, `the certificate of issuer "` + acmeIssuer + `" subject "` + acmeSubject + `" expired at `, nil},
		{"signature of another digest", SchemeLayout + mixed + ":2.0.0", require, `the signature by issuer "` + acmeIssuer + `" subject "` + acmeSubject + `" does not verify for ` + v2.Manifest.Digest.String(), nil},
		{"a key's policy, a certificate", good, policy(t, config.SignaturesRequire, pub), `signed by the certificate of issuer "` + acmeIssuer + `" subject "` + acmeSubject + `", and the policy trusts no identity`, nil},
		{"an identity's policy, a key", keySigned, require, "signed by the untrusted key " + hintOf(t, pub), nil},
		{"root with a transparency log, no log entry", good, keylessPolicy(t, config.SignaturesRequire, tlogRoot), "failed to verify log inclusion", nil},
		{"root with a CT log, no SCT", good, keylessPolicy(t, config.SignaturesRequire, ctRoot), "failed to verify signed certificate timestamp", nil},
		{"another subject under warn", otherSubject, keylessPolicy(t, config.SignaturesWarn, rootFile), `warn:no signature verifies: issuer "` + acmeIssuer + `" subject "mallory@acme.example" is not a trusted identity`, &Verified{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := noCreds
			opts.Policy = tc.policy
			f, err := Fetch(ctx, tc.ref, opts)
			if tc.verified == nil {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v\nwant %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := *tc.verified
			if w, ok := strings.CutPrefix(tc.want, "warn:"); ok {
				if !strings.Contains(f.Verified.Warning, w) {
					t.Fatalf("warning %q, want %q", f.Verified.Warning, w)
				}
				want.Warning = f.Verified.Warning
			}
			if *f.Verified != want {
				t.Errorf("verified %+v, want %+v", *f.Verified, want)
			}
		})
	}
}

// hintOf is the KeyHint of the PEM public key file pub.
func hintOf(t testing.TB, pub string) string {
	t.Helper()
	p := policy(t, config.SignaturesRequire, pub)
	for hint := range p.keys {
		return hint
	}
	t.Fatal("no key")
	return ""
}

// TestLoadKeylessPolicy: a trusted root that cannot be used is an error
// naming the policy and the file.
func TestLoadKeylessPolicy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notJSON := write("not-json.json", "{certificateAuthorities")
	noCA := write("no-ca.json", `{"mediaType": "`+sigtest.TrustedRootMediaType+`"}`)
	oldMedia := write("media.json", `{"mediaType": "application/json"}`)
	badCert := write("bad-cert.json", `{"mediaType": "`+sigtest.TrustedRootMediaType+`", "certificateAuthorities": [{"certChain": {"certificates": [{"rawBytes": "AAEC"}]}}]}`)
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		name, root, want string
	}{
		{"not JSON", notJSON, `signature policy "oci://a/": trusted root ` + notJSON + `: failed to proto-json unmarshal trusted root`},
		{"missing", missing, `signature policy "oci://a/": trusted root ` + missing + `: failed to read trusted root`},
		{"no certificate authority", noCA, `signature policy "oci://a/": trusted root ` + noCA + `: no certificate authority (certificateAuthorities), so no certificate could verify`},
		{"another media type", oldMedia, `trusted root ` + oldMedia + `: unsupported TrustedRoot media type: application/json`},
		{"a certificate that does not parse", badCert, `trusted root ` + badCert + `: failed to parse certificate`},
		{"no trusted root", "", `signature policy "oci://a/": identities need a trusted root (trusted_root)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPolicy(config.SignaturePolicy{Prefix: "oci://a/", Policy: config.SignaturesRequire, Identities: trustedIDs, TrustedRoot: tc.root})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestNewCertificateSigner: the certificate must be of the signing key.
func TestNewCertificateSigner(t *testing.T) {
	ca := sigtest.NewCA(t, "acme CA")
	key, _ := ca.Issue(t, sigtest.Identity{Issuer: acmeIssuer, Subject: acmeSubject})
	_, cert := ca.Issue(t, sigtest.Identity{Issuer: acmeIssuer, Subject: acmeSubject})
	if _, err := NewCertificateSigner(key, cert); err == nil || err.Error() != "signing certificate: not a certificate of the signing key" {
		t.Errorf("err = %v", err)
	}
	if _, err := NewCertificateSigner(key, ca.Cert); err == nil {
		t.Error("a CA's certificate of another key was accepted")
	}
}
