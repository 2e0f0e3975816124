package distribute

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"

	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"
)

// BundleMediaType is the artifactType of a signature referrer and the
// media type of its one layer: a Sigstore bundle (v0.3, JSON) signing the
// package artifact's manifest, as cosign stores them.
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Signer signs package artifacts with an ECDSA P-256 private key
// (LoadSigner, NewSigner), or with a certificate of one
// (NewCertificateSigner): a Sigstore bundle of a message signature, which
// sigstore-go verifies (sigstore-go's sign package is not used: it
// imports golang.org/x/crypto/openpgp, which the x/crypto this module
// needs no longer has).
type Signer struct {
	key  *ecdsa.PrivateKey
	hint []byte
	// cert is the DER certificate of key the bundle carries; nil for a
	// key's signature, named by hint.
	cert []byte
}

// LoadSigner reads a PEM private key (PKCS#8 or SEC 1 "EC PRIVATE KEY",
// unencrypted, ECDSA P-256) for Sign.
func LoadSigner(path string) (*Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("signing key %s: not PEM", path)
	}
	var key any
	if key, err = x509.ParsePKCS8PrivateKey(block.Bytes); err != nil {
		key, err = x509.ParseECPrivateKey(block.Bytes)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	switch {
	case err != nil:
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	case !ok || ec.Curve != elliptic.P256():
		return nil, fmt.Errorf("signing key %s: not an ECDSA P-256 key", path)
	}
	return NewSigner(ec)
}

// NewSigner returns a Signer of key, which must be ECDSA P-256.
func NewSigner(key *ecdsa.PrivateKey) (*Signer, error) {
	if key.Curve != elliptic.P256() {
		return nil, errors.New("signing key: not an ECDSA P-256 key")
	}
	hint, err := KeyHint(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	return &Signer{key: key, hint: []byte(hint)}, nil
}

// NewCertificateSigner returns a Signer of key whose bundles carry cert,
// a certificate of key's public key (keyless signing with a private
// certificate authority, or with a certificate Fulcio issued): a host
// verifies it against a policy's identities and trusted root, which MUST
// hold cert's issuing chain (a v0.3 bundle carries the leaf only). key
// must be ECDSA P-256.
func NewCertificateSigner(key *ecdsa.PrivateKey, cert *x509.Certificate) (*Signer, error) {
	s, err := NewSigner(key)
	if err != nil {
		return nil, err
	}
	if pub, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, errors.New("signing certificate: not a certificate of the signing key")
	}
	s.cert = cert.Raw
	return s, nil
}

// KeyHint names a public key as signatures and messages do: the standard
// base64 of the sha256 of its PKIX DER encoding.
func KeyHint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}

// signBundle signs data: a Sigstore bundle (v0.3) of a message
// signature over its sha256 by the signer's key, named by its hint or
// carrying its certificate.
func (s *Signer) signBundle(data []byte) (*bundle.Bundle, error) {
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, sum[:])
	if err != nil {
		return nil, err
	}
	material := &protobundle.VerificationMaterial{Content: &protobundle.VerificationMaterial_PublicKey{
		PublicKey: &protocommon.PublicKeyIdentifier{Hint: string(s.hint)}}}
	if s.cert != nil {
		material.Content = &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: s.cert}}
	}
	return bundle.NewBundle(&protobundle.Bundle{
		MediaType:            BundleMediaType,
		VerificationMaterial: material,
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: sum[:]},
			Signature:     sig}},
	})
}

// Sign signs the package artifact tag names in the layout with signer and
// stores the signature beside it as a referrer (an image manifest of
// artifactType BundleMediaType whose subject is the artifact), which Push
// copies with the artifact. The artifact's own digest does not change.
func Sign(ctx context.Context, layout, tag string, signer *Signer) (ocispec.Descriptor, error) {
	store, err := oci.NewWithContext(ctx, layout)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("sign: layout %s: %w", layout, err)
	}
	subject, err := store.Resolve(ctx, tag)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("sign: layout %s: tag %q: %w", layout, tag, err)
	}
	rc, err := store.Fetch(ctx, subject)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	var manifest bytes.Buffer
	_, err = manifest.ReadFrom(rc)
	rc.Close()
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	b, err := signer.signBundle(manifest.Bytes())
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("sign: %w", err)
	}
	data, err := b.MarshalJSON()
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("sign: %w", err)
	}
	return attach(ctx, store, subject, data)
}

// attach stores the bundle data in the layout store as a signature
// referrer of subject.
func attach(ctx context.Context, store *oci.Store, subject ocispec.Descriptor, data []byte) (ocispec.Descriptor, error) {
	layer := blob(BundleMediaType, data, nil)
	subject = ocispec.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size}
	ref, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: BundleMediaType, Config: ocispec.DescriptorEmptyJSON, Layers: []ocispec.Descriptor{layer}, Subject: &subject})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	desc := blob(ocispec.MediaTypeImageManifest, ref, nil)
	desc.ArtifactType = BundleMediaType
	for _, x := range []struct {
		d    ocispec.Descriptor
		data []byte
	}{{ocispec.DescriptorEmptyJSON, ocispec.DescriptorEmptyJSON.Data}, {layer, data}, {desc, ref}} {
		if err := store.Push(ctx, x.d, bytes.NewReader(x.data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return ocispec.Descriptor{}, fmt.Errorf("sign: %w", err)
		}
	}
	return desc, nil
}
