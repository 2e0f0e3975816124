package config

import (
	"fmt"
	"strings"
)

// Signature policies (SignaturePolicy.Policy).
const (
	// SignaturesRequire refuses an artifact that is not signed by one of
	// the policy's keys or identities, before anything is written.
	SignaturesRequire = "require"
	// SignaturesWarn installs it, with a warning naming what was found.
	SignaturesWarn = "warn"
	// SignaturesOff checks nothing.
	SignaturesOff = "off"
)

// SignaturePolicy is how artifacts whose reference starts with Prefix are
// verified before they are installed (config key signatures[];
// docs/security.md, "Artifact signatures"). The policy of the longest
// matching prefix applies (SignaturePolicyFor); an artifact no prefix
// matches is not verified.
type SignaturePolicy struct {
	// Prefix is a reference prefix: "oci://ghcr.io/acme/",
	// "oci://registry.example.com/", or "oci-layout:" for every layout.
	Prefix string
	// Policy is SignaturesRequire, SignaturesWarn or SignaturesOff.
	Policy string
	// Keys are the PEM public keys whose signatures are trusted, absolute
	// (a file's relative paths are resolved against its directory).
	Keys []string
	// Identities are the keyless signers trusted: a signature whose
	// certificate a certificate authority of TrustedRoot issued to one of
	// them (its OIDC issuer and subject) verifies. A policy MAY list both
	// Keys and Identities; a signature verifying with either is accepted.
	Identities []SignatureIdentity
	// TrustedRoot is the Sigstore trusted root file (trusted_root.json:
	// the certificate authorities, and the transparency, certificate
	// transparency and timestamp logs, trusted) that Identities'
	// certificates are verified against, absolute like Keys. Validate
	// requires it when Identities are listed and refuses it without
	// them; it is read by whoever verifies (distribute.LoadPolicy), never
	// fetched online. Empty when the policy has no identities.
	TrustedRoot string
}

// SignatureIdentity is a keyless signer: the OIDC issuer of its
// certificate and its subject (an e-mail address or a workflow URI).
type SignatureIdentity struct {
	Issuer  string
	Subject string
}

// SignaturePolicyFor returns the policy of the longest prefix of ref in
// c.Signatures, or nil when none matches.
func (c Config) SignaturePolicyFor(ref string) *SignaturePolicy {
	var best *SignaturePolicy
	for i := range c.Signatures {
		p := &c.Signatures[i]
		if strings.HasPrefix(ref, p.Prefix) && (best == nil || len(p.Prefix) > len(best.Prefix)) {
			best = p
		}
	}
	return best
}

// fileSignature is a signatures[] entry of kernel.json.
type fileSignature struct {
	Prefix     string   `json:"prefix"`
	Policy     string   `json:"policy"`
	Keys       []string `json:"keys"`
	Identities []struct {
		Issuer  string `json:"issuer"`
		Subject string `json:"subject"`
	} `json:"identities"`
	TrustedRoot string `json:"trusted_root"`
}

// convertSignatures converts the file's signatures, keys and trusted
// roots resolved against dir.
func convertSignatures(fs []fileSignature, dir string) []SignaturePolicy {
	var out []SignaturePolicy
	for _, f := range fs {
		p := SignaturePolicy{Prefix: f.Prefix, Policy: f.Policy, TrustedRoot: absolute(f.TrustedRoot, dir)}
		for _, k := range f.Keys {
			p.Keys = append(p.Keys, absolute(k, dir))
		}
		for _, id := range f.Identities {
			p.Identities = append(p.Identities, SignatureIdentity(id))
		}
		out = append(out, p)
	}
	return out
}

// signatures checks each policy: a prefix of a reference scheme, unique;
// a known policy; under require or warn, at least one key or identity;
// no empty key; identities with an issuer and a subject, and a trusted
// root with them and only with them.
func (ck *checker) signatures(ps []SignaturePolicy) {
	seen := map[string]int{}
	for i, p := range ps {
		at := fmt.Sprintf("signatures[%d]", i)
		switch j, dup := seen[p.Prefix]; {
		case !strings.HasPrefix(p.Prefix, "oci://") && !strings.HasPrefix(p.Prefix, "oci-layout:"):
			ck.add(at+".prefix", "%q must start with oci:// or oci-layout:", p.Prefix)
		case dup:
			ck.add(at+".prefix", "%q is also signatures[%d]'s", p.Prefix, j)
		default:
			seen[p.Prefix] = i
		}
		switch p.Policy {
		case SignaturesRequire, SignaturesWarn:
			if len(p.Keys) == 0 && len(p.Identities) == 0 {
				ck.add(at+".keys", "policy %q needs at least one key or identity", p.Policy)
			}
		case SignaturesOff:
		default:
			ck.add(at+".policy", "must be %q, %q or %q, got %q", SignaturesRequire, SignaturesWarn, SignaturesOff, p.Policy)
		}
		for j, k := range p.Keys {
			if k == "" {
				ck.add(fmt.Sprintf("%s.keys[%d]", at, j), "must not be empty")
			}
		}
		ck.identities(at, p)
	}
}

// identities checks p's identities and trusted root (at is p's path).
func (ck *checker) identities(at string, p SignaturePolicy) {
	for j, id := range p.Identities {
		if id.Issuer == "" {
			ck.add(fmt.Sprintf("%s.identities[%d].issuer", at, j), "missing")
		}
		if id.Subject == "" {
			ck.add(fmt.Sprintf("%s.identities[%d].subject", at, j), "missing")
		}
	}
	switch {
	case len(p.Identities) > 0 && p.TrustedRoot == "":
		ck.add(at+".trusted_root", "missing: identities are verified against a Sigstore trusted root file (trusted_root.json) that the policy names")
	case len(p.Identities) == 0 && p.TrustedRoot != "":
		ck.add(at+".trusted_root", "a trusted root verifies identities only, and the policy lists none: add identities (issuer and subject) or remove it (keys need no trusted root)")
	}
}
