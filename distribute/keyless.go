package distribute

import (
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"

	"github.com/extkernel/extkernel/kernel/config"
)

// keyless verifies certificate-signed bundles: the identities a policy
// trusts, its trusted root and the verifier built from it (LoadPolicy
// builds it once; it is immutable and shared by every verification).
type keyless struct {
	rootPath   string
	identities []config.SignatureIdentity
	// matchers are the identities as sigstore-go policy options.
	matchers []verify.PolicyOption
	verifier *verify.Verifier
	// currentTime is true when the root holds no log and no timestamp
	// authority: certificates are checked at the time of verification.
	currentTime bool
}

// loadKeyless loads the trusted root of p and builds its verifier.
func loadKeyless(p config.SignaturePolicy) (*keyless, error) {
	if p.TrustedRoot == "" {
		return nil, errors.New("identities need a trusted root (trusted_root)")
	}
	tr, err := root.NewTrustedRootFromPath(p.TrustedRoot)
	if err != nil {
		return nil, fmt.Errorf("trusted root %s: %w", p.TrustedRoot, err)
	}
	if len(tr.FulcioCertificateAuthorities()) == 0 {
		return nil, fmt.Errorf("trusted root %s: no certificate authority (certificateAuthorities), so no certificate could verify", p.TrustedRoot)
	}
	k := &keyless{rootPath: p.TrustedRoot, identities: p.Identities}
	for i, id := range p.Identities {
		ci, err := verify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, "")
		if err != nil {
			return nil, fmt.Errorf("identities[%d]: %w", i, err)
		}
		k.matchers = append(k.matchers, verify.WithCertificateIdentity(ci))
	}
	opts, currentTime := verifierOptions(tr)
	if k.verifier, err = verify.NewVerifier(tr, opts...); err != nil {
		return nil, fmt.Errorf("trusted root %s: %w", p.TrustedRoot, err)
	}
	k.currentTime = currentTime
	return k, nil
}

// verifierOptions derives the checks from what the trusted root holds
// (docs/security.md, "Artifact signatures"): a transparency log requires
// one verified log entry, and an observer timestamp (the log's, or a
// timestamp authority's) at which the certificate must be valid; a
// timestamp authority alone requires its timestamp; a certificate
// transparency log requires a signed certificate timestamp in the
// certificate. With neither a log nor a timestamp authority (a private
// CA issuing long-lived certificates), the certificate must be valid at
// the time of verification (currentTime).
func verifierOptions(tr *root.TrustedRoot) (opts []verify.VerifierOption, currentTime bool) {
	tlog, tsa := len(tr.RekorLogs()) > 0, len(tr.TimestampingAuthorities()) > 0
	if tlog {
		opts = append(opts, verify.WithTransparencyLog(1))
	}
	if tlog || tsa {
		opts = append(opts, verify.WithObserverTimestamps(1))
	} else {
		opts, currentTime = append(opts, verify.WithCurrentTime()), true
	}
	if len(tr.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	return opts, currentTime
}

// check verifies bundle b, signed with the certificate cert, as a
// signature of the manifest whose sha256 is digest (named name), and
// returns the trusted identity that signed it. k may be nil (the policy
// trusts no identity).
func (k *keyless) check(b *bundle.Bundle, cert *x509.Certificate, name string, digest []byte) (*Verified, error) {
	sum, err := certificate.SummarizeCertificate(cert)
	if err != nil {
		return nil, fmt.Errorf("signed by a certificate that names no signer: %w", err)
	}
	who := fmt.Sprintf("issuer %q subject %q", sum.Issuer, sum.SubjectAlternativeName)
	switch {
	case k == nil:
		return nil, fmt.Errorf("signed by the certificate of %s, and the policy trusts no identity", who)
	case !k.trusts(sum):
		return nil, fmt.Errorf("%s is not a trusted identity", who)
	case k.currentTime && time.Now().After(cert.NotAfter):
		return nil, fmt.Errorf("the certificate of %s expired at %s", who, cert.NotAfter.UTC().Format(time.RFC3339))
	case k.currentTime && time.Now().Before(cert.NotBefore):
		return nil, fmt.Errorf("the certificate of %s is not valid before %s", who, cert.NotBefore.UTC().Format(time.RFC3339))
	}
	res, err := k.verifier.Verify(b, verify.NewPolicy(verify.WithArtifactDigest("sha256", digest), k.matchers...))
	switch {
	case err != nil && strings.Contains(err.Error(), "failed to verify leaf certificate"):
		// sigstore-go names no error type for a chain that does not
		// verify: "failed to verify leaf certificate: ...".
		return nil, fmt.Errorf("signed by a certificate no trusted root issued (%s)", who)
	case err != nil:
		return nil, fmt.Errorf("the signature by %s does not verify for %s: %w", who, name, err)
	case res.VerifiedIdentity == nil:
		return nil, fmt.Errorf("the signature by %s verified no identity", who)
	}
	id := res.VerifiedIdentity
	return &Verified{Signed: true, Issuer: id.Issuer.Issuer, Subject: id.SubjectAlternativeName.SubjectAlternativeName}, nil
}

// trusts reports whether the certificate summarized names one of k's
// identities, as sigstore-go's exact matching does.
func (k *keyless) trusts(sum certificate.Summary) bool {
	for _, id := range k.identities {
		if id.Issuer == sum.Issuer && id.Subject == sum.SubjectAlternativeName {
			return true
		}
	}
	return false
}

// trusted names k's identities, for messages.
func (k *keyless) trusted() string {
	names := make([]string, len(k.identities))
	for i, id := range k.identities {
		names[i] = fmt.Sprintf("issuer %q subject %q", id.Issuer, id.Subject)
	}
	return strings.Join(names, ", ")
}
