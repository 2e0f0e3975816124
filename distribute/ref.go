package distribute

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2/registry"
)

// Reference schemes.
const (
	// SchemeOCI prefixes a reference to a registry's repository.
	SchemeOCI = "oci://"
	// SchemeLayout prefixes a reference to an OCI image layout directory.
	SchemeLayout = "oci-layout:"
)

// Reference is a parsed artifact reference.
type Reference struct {
	// Layout is true for an oci-layout: reference.
	Layout bool
	// Repository is REGISTRY/REPOSITORY for an oci:// reference
	// ("ghcr.io/acme/hello"); Path the layout directory, absolute, for an
	// oci-layout: one.
	Repository string
	Path       string
	// Tag or Digest names the artifact: exactly one is set.
	Tag    string
	Digest digest.Digest
}

// IsReference reports whether s is written as an artifact reference (it
// starts with SchemeOCI or SchemeLayout), rather than a package directory
// or archive.
func IsReference(s string) bool {
	return strings.HasPrefix(s, SchemeOCI) || strings.HasPrefix(s, SchemeLayout)
}

// ParseReference parses an artifact reference (see the package doc). A
// layout's PATH is made absolute. It fails naming what is wrong; a
// reference without a tag or digest is an error (there is no implicit
// "latest").
func ParseReference(s string) (Reference, error) {
	bad := func(format string, args ...any) (Reference, error) {
		return Reference{}, fmt.Errorf("reference %q: %s", s, fmt.Sprintf(format, args...))
	}
	switch {
	case strings.HasPrefix(s, SchemeOCI):
		r, err := registry.ParseReference(strings.TrimPrefix(s, SchemeOCI))
		if err != nil {
			return bad("%v", err)
		}
		ref := Reference{Repository: r.Registry + "/" + r.Repository}
		if d, err := r.Digest(); err == nil {
			ref.Digest = d
		} else if r.Reference != "" {
			ref.Tag = r.Reference
		} else {
			return bad("names no tag or digest (write oci://%s:TAG or @sha256:…)", ref.Repository)
		}
		return ref, nil
	case strings.HasPrefix(s, SchemeLayout):
		rest := strings.TrimPrefix(s, SchemeLayout)
		var ref Reference
		p, d, ok := strings.Cut(rest, "@")
		if ok {
			dg, err := digest.Parse(d)
			if err != nil {
				return bad("digest %q: %v", d, err)
			}
			ref.Digest = dg
		} else {
			i := strings.LastIndex(rest, ":")
			if i < 0 || i == len(rest)-1 {
				return bad("names no tag or digest (write oci-layout:PATH:TAG or oci-layout:PATH@sha256:…)")
			}
			p, ref.Tag = rest[:i], rest[i+1:]
			if err := registry.Reference.ValidateReferenceAsTag(registry.Reference{Reference: ref.Tag}); err != nil {
				return bad("tag %q: %v", ref.Tag, err)
			}
		}
		if p == "" {
			return bad("names no layout directory")
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return bad("%v", err)
		}
		ref.Layout, ref.Path = true, abs
		return ref, nil
	}
	return bad("not an artifact reference (it starts with neither %s nor %s)", SchemeOCI, SchemeLayout)
}

// target is the tag or digest the reference names, as oras resolves it.
func (r Reference) target() string {
	if r.Digest != "" {
		return r.Digest.String()
	}
	return r.Tag
}

// String returns the reference as ParseReference reads it.
func (r Reference) String() string {
	sep, at := ":", r.target()
	if r.Digest != "" {
		sep = "@"
	}
	if r.Layout {
		return SchemeLayout + r.Path + sep + at
	}
	return SchemeOCI + r.Repository + sep + at
}

// Pinned returns the reference to the artifact by digest d: what the state
// file records (pluginpkg.Package.Origin).
func (r Reference) Pinned(d digest.Digest) string {
	r.Tag, r.Digest = "", d
	return r.String()
}
