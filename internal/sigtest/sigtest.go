// Package sigtest builds, for tests, what keyless signatures need: a
// private certificate authority issuing Fulcio-style code-signing
// certificates (the OIDC issuer in Fulcio's extensions, the subject as
// the subject alternative name), and a Sigstore trusted root file
// (trusted_root.json) that trusts it. Only tests import it.
package sigtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/json"
	"math/big"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// Fulcio's certificate extensions of the OIDC issuer: v2 holds a DER
// UTF8String, v1 (deprecated) the raw string.
var (
	oidIssuerV1 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 1}
	oidIssuerV2 = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 57264, 1, 8}
)

// TrustedRootMediaType is the media type of a trusted root file.
const TrustedRootMediaType = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"

// CA is a certificate authority: a self-signed root (NewCA) or an
// intermediate a CA signed (Intermediate).
type CA struct {
	// Cert is the CA's certificate.
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// parent is the CA that signed Cert; nil for a root.
	parent *CA
}

// NewCA returns a new self-signed root CA named name, valid from a day
// ago for ten years.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	return newCA(t, name, nil)
}

// Intermediate returns a new CA named name that ca signed.
func (ca *CA) Intermediate(t testing.TB, name string) *CA {
	t.Helper()
	return newCA(t, name, ca)
}

func newCA(t testing.TB, name string, parent *CA) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: name, Organization: []string{"sigtest"}},
		NotBefore: time.Now().Add(-24 * time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign, BasicConstraintsValid: true, IsCA: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.Cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, key: key, parent: parent}
}

// Identity is the signer a leaf certificate names.
type Identity struct {
	// Issuer is the OIDC issuer, in Fulcio's v2 extension
	// (1.3.6.1.4.1.57264.1.8) unless V1.
	Issuer string
	// Subject is the subject alternative name: a URI when it has a
	// scheme ("https://github.com/..."), else an e-mail address.
	Subject string
	// V1 puts the issuer in the deprecated v1 extension
	// (1.3.6.1.4.1.57264.1.1) instead.
	V1 bool
	// NotBefore and NotAfter bound the certificate; zero: from an hour
	// ago to a day from now.
	NotBefore, NotAfter time.Time
}

// Issue returns a new ECDSA P-256 key and a code-signing certificate of
// it that ca issued to id.
func (ca *CA) Issue(t testing.TB, id Identity) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), NotBefore: id.NotBefore, NotAfter: id.NotAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning},
	}
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	}
	if strings.Contains(id.Subject, "://") {
		u, err := url.Parse(id.Subject)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = []*url.URL{u}
	} else {
		tmpl.EmailAddresses = []string{id.Subject}
	}
	ext := pkix.Extension{Id: oidIssuerV1, Value: []byte(id.Issuer)}
	if !id.V1 {
		v, err := asn1.MarshalWithParams(id.Issuer, "utf8")
		if err != nil {
			t.Fatal(err)
		}
		ext = pkix.Extension{Id: oidIssuerV2, Value: v}
	}
	tmpl.ExtraExtensions = []pkix.Extension{ext}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// Root is what a trusted root file holds.
type Root struct {
	// CAs are the certificate authorities trusted, each with its chain
	// up to its root.
	CAs []*CA
	// TransparencyLog and CTLog add a transparency log and a certificate
	// transparency log (a new key each), so that verification requires
	// a log entry, or a signed certificate timestamp.
	TransparencyLog, CTLog bool
}

// WriteTrustedRoot writes r to path as a Sigstore trusted root file, as
// an operator would ship it.
func WriteTrustedRoot(t testing.TB, path string, r Root) {
	t.Helper()
	since := map[string]string{"start": time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)}
	var cas []any
	for _, ca := range r.CAs {
		var chain []any
		for c := ca; c != nil; c = c.parent {
			chain = append(chain, map[string]any{"rawBytes": c.Cert.Raw})
		}
		cas = append(cas, map[string]any{"subject": map[string]string{"organization": "sigtest", "commonName": ca.Cert.Subject.CommonName},
			"uri": "https://ca.sigtest.example", "certChain": map[string]any{"certificates": chain}, "validFor": since})
	}
	doc := map[string]any{"mediaType": TrustedRootMediaType, "certificateAuthorities": cas}
	if r.TransparencyLog {
		doc["tlogs"] = []any{logInstance(t, "https://rekor.sigtest.example", since)}
	}
	if r.CTLog {
		doc["ctlogs"] = []any{logInstance(t, "https://ctlog.sigtest.example", since)}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// logInstance is a transparency log of a new key, valid since since.
func logInstance(t testing.TB, url string, since map[string]string) map[string]any {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&newKey(t).PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	id := sha256.Sum256(der)
	return map[string]any{"baseUrl": url, "hashAlgorithm": "SHA2_256", "logId": map[string]any{"keyId": id[:]},
		"publicKey": map[string]any{"rawBytes": der, "keyDetails": "PKIX_ECDSA_P256_SHA_256", "validFor": since}}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
