package distribute

import (
	"context"
	"fmt"
	"os"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
)

// Push copies the package artifact in a layout to a registry and returns
// its manifest descriptor, whose digest is the artifact's identity there
// too. artifact is an oci-layout: reference, or a layout directory that
// holds one artifact; dest is an oci:// reference by tag. Its signature
// referrers (Sign) are copied with it. The artifact is
// checked first as Fetch checks it (but for this host's platform, and
// without reading its layer): anything else is a *RefusedError and
// nothing is pushed.
func Push(ctx context.Context, artifact, dest string, opts Options) (ocispec.Descriptor, error) {
	src, err := layoutReference(ctx, artifact)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	dst, err := ParseReference(dest)
	switch {
	case err != nil:
		return ocispec.Descriptor{}, err
	case dst.Layout || dst.Tag == "":
		return ocispec.Descriptor{}, fmt.Errorf("push to %s: the destination must be oci://REGISTRY/REPOSITORY:TAG", dest)
	}
	store, err := opts.open(ctx, src)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("artifact %s: %w", artifact, err)
	}
	refuse := func(err error, format string, args ...any) error {
		return &RefusedError{Reference: artifact, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	a, err := inspect(ctx, store, src, refuse)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	repo, err := opts.repository(dst)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	desc, err := oras.ExtendedCopy(ctx, store.(oras.ReadOnlyGraphTarget), a.desc.Digest.String(), repo, dst.Tag, oras.DefaultExtendedCopyOptions)
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("push %s to %s: %w", artifact, dest, err)
	}
	return desc, nil
}

// layoutReference parses artifact: an oci-layout: reference, or a layout
// directory whose index.json lists exactly one manifest (its tag, or its
// digest when untagged).
func layoutReference(ctx context.Context, artifact string) (Reference, error) {
	if strings.HasPrefix(artifact, SchemeLayout) {
		return ParseReference(artifact)
	}
	if fi, err := os.Stat(artifact); err != nil || !fi.IsDir() {
		return Reference{}, fmt.Errorf("artifact %s: not an OCI layout directory or an oci-layout: reference", artifact)
	}
	if err := checkIndex(artifact); err != nil {
		return Reference{}, err
	}
	store, err := oci.NewFromFS(ctx, os.DirFS(artifact))
	if err != nil {
		return Reference{}, fmt.Errorf("artifact %s: %w", artifact, err)
	}
	var tags []string
	if err := store.Tags(ctx, "", func(t []string) error { tags = append(tags, t...); return nil }); err != nil {
		return Reference{}, fmt.Errorf("artifact %s: %w", artifact, err)
	}
	if len(tags) != 1 {
		return Reference{}, fmt.Errorf("artifact %s: the layout holds %d tags (%s): name one as oci-layout:%s:TAG",
			artifact, len(tags), strings.Join(tags, ", "), artifact)
	}
	return ParseReference(SchemeLayout + artifact + ":" + tags[0])
}
