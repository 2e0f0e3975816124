package distribute

import (
	"context"
	"crypto"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"

	"github.com/extkernel/extkernel/kernel/config"
)

// maxSignatures bounds how many signature referrers of one artifact are
// read, and maxBundleBytes each bundle.
const (
	maxSignatures  = 16
	maxBundleBytes = 1 << 20
)

// Policy is a signature policy with its keys and trusted root loaded
// (LoadPolicy). It is immutable: one Policy may verify any number of
// artifacts concurrently.
type Policy struct {
	// Prefix and Mode are config.SignaturePolicy's Prefix and Policy.
	Prefix, Mode string
	// keys maps each trusted key's KeyHint to it; names its file.
	keys     map[string]*root.ExpiringKey
	keyNames map[string]string
	// keyless verifies certificates; nil when p trusts no identity.
	keyless *keyless
}

// LoadPolicy loads the keys of p (PEM public keys) and, when p lists
// identities, its trusted root (Sigstore's trusted_root.json, read from
// p.TrustedRoot, never fetched), from which it derives the checks a
// certificate's signature must pass (docs/security.md, "Artifact
// signatures"). An error names the policy and the file.
func LoadPolicy(p config.SignaturePolicy) (*Policy, error) {
	out := &Policy{Prefix: p.Prefix, Mode: p.Policy, keys: map[string]*root.ExpiringKey{}, keyNames: map[string]string{}}
	if len(p.Identities) > 0 {
		k, err := loadKeyless(p)
		if err != nil {
			return nil, fmt.Errorf("signature policy %q: %w", p.Prefix, err)
		}
		out.keyless = k
	}
	for _, path := range p.Keys {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("signature policy %q: %w", p.Prefix, err)
		}
		pub, err := cryptoutils.UnmarshalPEMToPublicKey(data)
		if err != nil {
			return nil, fmt.Errorf("signature policy %q: key %s: %w", p.Prefix, path, err)
		}
		if err := out.add(pub, path); err != nil {
			return nil, fmt.Errorf("signature policy %q: key %s: %w", p.Prefix, path, err)
		}
	}
	return out, nil
}

// add trusts pub, named name in messages.
func (p *Policy) add(pub crypto.PublicKey, name string) error {
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return err
	}
	hint, err := KeyHint(pub)
	if err != nil {
		return err
	}
	p.keys[hint], p.keyNames[hint] = root.NewExpiringKey(v, time.Time{}, time.Time{}), name
	return nil
}

// Verified is what verification found.
type Verified struct {
	// Signed is true when a trusted key or identity signed the artifact.
	Signed bool
	// Key names the trusted key that signed it (its file) and Hint its
	// KeyHint; both are empty for a keyless signature.
	Key, Hint string
	// Issuer and Subject are the trusted identity whose certificate
	// signed it (keyless); both are empty for a key's signature.
	Issuer, Subject string
	// Warning, under SignaturesWarn, says why an artifact was accepted
	// unverified.
	Warning string
}

// verifyArtifact checks the signatures of the artifact desc in src
// against p: under require, none verifying is a refusal naming the
// identities found; under warn, a warning.
func verifyArtifact(ctx context.Context, src source, desc ocispec.Descriptor, p *Policy, refuse refuser) (*Verified, error) {
	if p == nil || p.Mode == config.SignaturesOff {
		return &Verified{}, nil
	}
	found, err := findSignatures(ctx, src, desc, refuse)
	if err != nil {
		return nil, err
	}
	v := &Verified{}
	var problems []string
	for _, b := range found {
		signed, err := p.check(b, desc)
		if err == nil {
			return signed, nil
		}
		problems = append(problems, err.Error())
	}
	why := "not signed (no signature referrer)"
	if len(problems) > 0 {
		why = "no signature verifies: " + strings.Join(problems, "; ")
	}
	msg := fmt.Sprintf("%s (policy %s for %q trusts %s)", why, p.Mode, p.Prefix, p.trusted())
	if p.Mode == config.SignaturesRequire {
		return nil, refuse(nil, "%s", msg)
	}
	v.Warning = msg
	return v, nil
}

// trusted names the trusted keys and identities, for messages.
func (p *Policy) trusted() string {
	var names []string
	for _, n := range p.keyNames {
		names = append(names, n)
	}
	var out []string
	if len(names) > 0 {
		slices.Sort(names)
		out = append(out, "key "+strings.Join(names, ", "))
	}
	if p.keyless != nil {
		out = append(out, p.keyless.trusted()+" (trusted root "+p.keyless.rootPath+")")
	}
	if len(out) == 0 {
		return "no key"
	}
	return strings.Join(out, " and ")
}

// check verifies bundle b as a signature of the manifest desc: a
// certificate's against the policy's identities, a key's against its
// keys.
func (p *Policy) check(b *bundle.Bundle, desc ocispec.Descriptor) (*Verified, error) {
	vc, err := b.VerificationContent()
	if err != nil {
		return nil, err
	}
	digestBytes, err := hex.DecodeString(desc.Digest.Encoded())
	if err != nil {
		return nil, err
	}
	if cert := vc.Certificate(); cert != nil {
		return p.keyless.check(b, cert, desc.Digest.String(), digestBytes)
	}
	hint := ""
	if pk := vc.PublicKey(); pk != nil {
		hint = pk.Hint()
	}
	if _, ok := p.keys[hint]; !ok {
		return nil, fmt.Errorf("signed by the untrusted key %s", hintOr(hint))
	}
	verifier, err := verify.NewVerifier(root.NewTrustedPublicKeyMaterialFromMapping(p.keys), verify.WithNoObserverTimestamps())
	if err != nil {
		return nil, err
	}
	if _, err := verifier.Verify(b, verify.NewPolicy(verify.WithArtifactDigest("sha256", digestBytes), verify.WithKey())); err != nil {
		return nil, fmt.Errorf("the signature by key %s does not verify for %s: %v", hintOr(hint), desc.Digest, err)
	}
	return &Verified{Signed: true, Key: p.keyNames[hint], Hint: hint}, nil
}

// findSignatures reads the bundles of desc's signature referrers.
func findSignatures(ctx context.Context, src source, desc ocispec.Descriptor, refuse refuser) ([]*bundle.Bundle, error) {
	g, ok := src.(content.ReadOnlyGraphStorage)
	if !ok {
		return nil, errors.New("the source lists no referrers")
	}
	refs, err := registry.Referrers(ctx, g, desc, BundleMediaType)
	if err != nil {
		return nil, fmt.Errorf("signatures of %s: %w", desc.Digest, err)
	}
	if len(refs) > maxSignatures {
		refs = refs[:maxSignatures]
	}
	var out []*bundle.Bundle
	for _, r := range refs {
		data, err := readBlob(ctx, src, r, MaxManifestBytes, "signature manifest", refuse)
		if err != nil {
			return nil, err
		}
		var m ocispec.Manifest
		if json.Unmarshal(data, &m) != nil || len(m.Layers) != 1 || m.Layers[0].MediaType != BundleMediaType {
			continue
		}
		bdata, err := readBlob(ctx, src, m.Layers[0], maxBundleBytes, "signature bundle", refuse)
		if err != nil {
			return nil, err
		}
		if b := parseBundle(bdata); b != nil {
			out = append(out, b)
		}
	}
	return out, nil
}

// parseBundle parses a Sigstore bundle, nil when it is not one. A v0.3
// bundle's verification material may be an X.509 certificate chain (the
// leaf and its intermediates), which sigstore-go accepts only when asked
// to, and refuses when asked to in an older bundle.
func parseBundle(data []byte) *bundle.Bundle {
	var b bundle.Bundle
	if b.UnmarshalJSON(data) == nil {
		return &b
	}
	b = bundle.Bundle{}
	bundle.AllowCertificateChain()(&b)
	if b.UnmarshalJSON(data) == nil {
		return &b
	}
	return nil
}

// hintOr is hint, or "(none)" for a signature that names no key.
func hintOr(hint string) string {
	if hint == "" {
		return "(none)"
	}
	return hint
}
