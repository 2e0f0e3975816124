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

// Policy is a signature policy with its keys loaded (LoadPolicy).
type Policy struct {
	// Prefix and Mode are config.SignaturePolicy's Prefix and Policy.
	Prefix, Mode string
	// keys maps each trusted key's KeyHint to it; names its file.
	keys     map[string]*root.ExpiringKey
	keyNames map[string]string
}

// LoadPolicy loads the keys of p (PEM public keys).
func LoadPolicy(p config.SignaturePolicy) (*Policy, error) {
	out := &Policy{Prefix: p.Prefix, Mode: p.Policy, keys: map[string]*root.ExpiringKey{}, keyNames: map[string]string{}}
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
	// Signed is true when a trusted key signed the artifact; Key names
	// that key (its file) and Hint its KeyHint.
	Signed    bool
	Key, Hint string
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
		hint, err := p.check(b, desc)
		if err == nil {
			v.Signed, v.Hint, v.Key = true, hint, p.keyNames[hint]
			return v, nil
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

// trusted names the trusted keys, for messages.
func (p *Policy) trusted() string {
	var names []string
	for _, n := range p.keyNames {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "no key"
	}
	slices.Sort(names)
	return "key " + strings.Join(names, ", ")
}

// check verifies bundle b as a signature of the manifest desc, returning
// the signing key's hint.
func (p *Policy) check(b *bundle.Bundle, desc ocispec.Descriptor) (string, error) {
	vc, err := b.VerificationContent()
	if err != nil {
		return "", err
	}
	hint := ""
	if pk := vc.PublicKey(); pk != nil {
		hint = pk.Hint()
	}
	if _, ok := p.keys[hint]; !ok {
		return "", fmt.Errorf("signed by the untrusted key %s", hintOr(hint))
	}
	verifier, err := verify.NewVerifier(root.NewTrustedPublicKeyMaterialFromMapping(p.keys), verify.WithNoObserverTimestamps())
	if err != nil {
		return "", err
	}
	digestBytes, err := hex.DecodeString(desc.Digest.Encoded())
	if err != nil {
		return "", err
	}
	if _, err := verifier.Verify(b, verify.NewPolicy(verify.WithArtifactDigest("sha256", digestBytes), verify.WithKey())); err != nil {
		return "", fmt.Errorf("the signature by key %s does not verify for %s: %v", hintOr(hint), desc.Digest, err)
	}
	return hint, nil
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
		var b bundle.Bundle
		if err := b.UnmarshalJSON(bdata); err != nil {
			continue
		}
		out = append(out, &b)
	}
	return out, nil
}

// hintOr is hint, or "(none)" for a signature that names no key.
func hintOr(hint string) string {
	if hint == "" {
		return "(none)"
	}
	return hint
}
