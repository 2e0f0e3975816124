package distribute

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oras.land/oras-go/v2/content/oci"

	"github.com/extkernel/extkernel/internal/sigtest"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

// newKey writes a new ECDSA P-256 key pair as PEM files in dir and
// returns the private key's path and the public key's.
func newKey(t testing.TB, dir, name string) (priv, pub string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	pubDER, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	priv, pub = filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
	return priv, pub
}

// signedLayout packs a package into a new layout and signs it with key
// (none when empty); it returns the pack.
func signedLayout(t testing.TB, dir, version, key string) *Packed {
	t.Helper()
	ctx := context.Background()
	p, err := Pack(ctx, writePackage(t, version, pluginpkg.HostPlatform()), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		s, err := LoadSigner(key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Sign(ctx, dir, p.Tag, s); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// policy loads a policy trusting pub.
func policy(t testing.TB, mode string, pubs ...string) *Policy {
	t.Helper()
	p, err := LoadPolicy(config.SignaturePolicy{Prefix: "oci", Policy: mode, Keys: pubs})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSignatures: a signed artifact verifies from a layout and, pushed
// with its signature, from a registry; unsigned, untrusted, another
// artifact's signature and a manifest swapped after signing are refused
// under require before anything is written, and warned about under warn.
func TestSignatures(t *testing.T) {
	ctx := context.Background()
	keys := t.TempDir()
	priv, pub := newKey(t, keys, "acme")
	otherPriv, _ := newKey(t, keys, "other")
	work := t.TempDir()
	signed := signedLayout(t, filepath.Join(work, "signed.oci"), "1.0.0", priv)
	unsigned := signedLayout(t, filepath.Join(work, "unsigned.oci"), "1.0.0", "")
	untrusted := signedLayout(t, filepath.Join(work, "untrusted.oci"), "1.0.0", otherPriv)
	// another artifact's signature: the layout holds v1 signed and v2
	// unsigned; v1's signature names v1's digest as its subject and
	// signs v1's manifest, so it is no signature of v2.
	mixed := filepath.Join(work, "mixed.oci")
	v1 := signedLayout(t, mixed, "1.0.0", "")
	v2 := signedLayout(t, mixed, "2.0.0", "")
	store, _ := oci.New(mixed)
	s, _ := LoadSigner(priv)
	v1Bytes, _ := os.ReadFile(filepath.Join(mixed, "blobs", "sha256", v1.Manifest.Digest.Encoded()))
	b, _ := s.signBundle(v1Bytes)
	bundleJSON, _ := b.MarshalJSON()
	if _, err := attach(ctx, store, v2.Manifest, bundleJSON); err != nil { // v1's signature, claimed for v2
		t.Fatal(err)
	}
	host := startRegistry(t)
	if _, err := Push(ctx, signed.Layout, SchemeOCI+host+"/acme/hello:1", noCreds); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, signed.Layout, SchemeOCI+host+"/acme/swapped:1", noCreds); err != nil {
		t.Fatal(err)
	}
	other := signedLayout(t, filepath.Join(work, "other.oci"), "2.0.0", "")
	if _, err := Push(ctx, other.Layout, SchemeOCI+host+"/acme/swapped:1", noCreds); err != nil { // the tag now names another manifest
		t.Fatal(err)
	}
	require := policy(t, config.SignaturesRequire, pub)
	for _, tc := range []struct {
		name, ref string
		policy    *Policy
		want      string // "" verifies; "warn:" prefix warns
	}{
		{"signed layout", signed.Reference(), require, ""},
		{"signed registry", SchemeOCI + host + "/acme/hello:1", require, ""},
		{"unsigned", unsigned.Reference(), require, "not signed (no signature referrer) (policy require for \"oci\" trusts key " + pub + ")"},
		{"untrusted key", untrusted.Reference(), require, "signed by the untrusted key"},
		{"signature of another digest", SchemeLayout + mixed + ":2.0.0", require, "does not verify for " + v2.Manifest.Digest.String()},
		{"manifest swapped after signing", SchemeOCI + host + "/acme/swapped:1", require, "not signed"},
		{"unsigned under warn", unsigned.Reference(), policy(t, config.SignaturesWarn, pub), "warn:not signed"},
		{"unsigned under off", unsigned.Reference(), policy(t, config.SignaturesOff, pub), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := noCreds
			opts.Policy = tc.policy
			home := t.TempDir()
			f, err := Fetch(ctx, tc.ref, opts)
			switch {
			case tc.want == "" || strings.HasPrefix(tc.want, "warn:"):
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				w := strings.TrimPrefix(tc.want, "warn:")
				if (w == "") != (f.Verified.Warning == "") || !strings.Contains(f.Verified.Warning, w) {
					t.Errorf("warning %q, want %q", f.Verified.Warning, w)
				}
				if tc.want == "" && tc.policy.Mode == config.SignaturesRequire && (!f.Verified.Signed || f.Verified.Key != pub) {
					t.Errorf("verified %+v", f.Verified)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if left, _ := os.ReadDir(home); len(left) != 0 {
				t.Errorf("wrote %v to the home", left)
			}
		})
	}
}

// BenchmarkVerify measures verifying a signed artifact's signature,
// warm (the referrer and bundle read from a layout, the policy loaded):
// signed by a key, and keyless (a certificate of a private CA verified
// against a trusted root file, the signer's identity matched). Issue 27
// asks for at most 50 ms.
func BenchmarkVerify(b *testing.B) {
	dir := b.TempDir()
	priv, pub := newKey(b, dir, "acme")
	ca := sigtest.NewCA(b, "acme CA")
	rootFile := filepath.Join(dir, "trusted_root.json")
	sigtest.WriteTrustedRoot(b, rootFile, sigtest.Root{CAs: []*sigtest.CA{ca}})
	key, cert := ca.Issue(b, sigtest.Identity{Issuer: acmeIssuer, Subject: acmeSubject})
	for _, bc := range []struct {
		name   string
		p      *Packed
		policy *Policy
	}{
		{"key", signedLayout(b, filepath.Join(dir, "key.oci"), "1.0.0", priv), policy(b, config.SignaturesRequire, pub)},
		{"keyless", certLayout(b, filepath.Join(dir, "keyless.oci"), "1.0.0", key, cert), keylessPolicy(b, config.SignaturesRequire, rootFile)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			r, _ := ParseReference(bc.p.Reference())
			src, err := noCreds.open(ctx, r)
			if err != nil {
				b.Fatal(err)
			}
			refuse := func(err error, format string, args ...any) error { return &RefusedError{Reason: format, Err: err} }
			for b.Loop() {
				v, err := verifyArtifact(ctx, src, bc.p.Manifest, bc.policy, refuse)
				if err != nil || !v.Signed {
					b.Fatal(v, err)
				}
			}
		})
	}
}
