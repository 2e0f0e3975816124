package config

import (
	"fmt"
	"strings"
)

// Signature policies (SignaturePolicy.Policy).
const (
	// SignaturesRequire refuses an artifact that is not signed by one of
	// the policy's keys, before anything is written.
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
	// Identities are the keyless signers trusted (an OIDC issuer and the
	// certificate's subject). This build verifies keys only: a policy
	// that lists identities is refused by Validate.
	Identities []SignatureIdentity
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
}

// convertSignatures converts the file's signatures, keys resolved
// against dir.
func convertSignatures(fs []fileSignature, dir string) []SignaturePolicy {
	var out []SignaturePolicy
	for _, f := range fs {
		p := SignaturePolicy{Prefix: f.Prefix, Policy: f.Policy}
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
// a known policy; under require or warn, at least one key; no identities
// (keyless verification is not in this build).
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
				ck.add(at+".keys", "policy %q needs at least one key", p.Policy)
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
		if len(p.Identities) > 0 {
			ck.add(at+".identities", "keyless verification (issuer and subject) is not supported by this build yet: trust keys")
		}
	}
}
