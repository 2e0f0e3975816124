package distribute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/pluginpkg"
)

// Bounds of what Fetch reads, each checked against a descriptor's size
// before anything is read and against the bytes as they are read.
const (
	// MaxManifestBytes bounds an artifact's manifest: 4 MiB, as
	// registries bound theirs.
	MaxManifestBytes = 4 << 20
	// MaxLayerBytes bounds its package archive: pluginpkg.MaxPackageBytes,
	// the most a package may hold.
	MaxLayerBytes = pluginpkg.MaxPackageBytes
)

// ErrRefused is matched (errors.Is) by every *RefusedError.
var ErrRefused = errors.New("artifact refused")

// RefusedError is an artifact Fetch or Push refuses; nothing was written
// to a home because of it.
type RefusedError struct {
	// Reference is the reference as given.
	Reference string
	// Reason says what is wrong, naming the blob or field.
	Reason string
	// Err is the underlying error, when there is one.
	Err error
}

// Error returns "artifact REF: REASON".
func (e *RefusedError) Error() string {
	return fmt.Sprintf("artifact %s: %s", e.Reference, e.Reason)
}

// Unwrap returns the underlying error.
func (e *RefusedError) Unwrap() error { return e.Err }

// Is reports whether target is ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Fetched is an artifact Fetch checked and downloaded.
type Fetched struct {
	// Reference is the reference as parsed; Digest the manifest digest it
	// resolved to, and Origin the reference by that digest
	// (Reference.Pinned), for pluginpkg.InstallOptions.Origin.
	Reference Reference
	Digest    digest.Digest
	Origin    string
	// Manifest is the package's plugin.json (the artifact's config),
	// parsed, and ManifestBytes its bytes, for
	// pluginpkg.InstallOptions.ExpectManifest.
	Manifest      *pluginpkg.Manifest
	ManifestBytes []byte
	// Archive is the package archive, verified against its digest, in a
	// temporary file Close removes.
	Archive string
	// Verified is what signature verification under Options.Policy found.
	Verified *Verified
}

// Close removes the downloaded archive. It may be called more than once.
func (f *Fetched) Close() error {
	if f.Archive == "" {
		return nil
	}
	err := os.Remove(f.Archive)
	f.Archive = ""
	return err
}

// Fetch resolves ref, checks that it is a package artifact whose package
// runs on this host and downloads its archive into a temporary file, in
// this order, reading nothing a step refuses:
//
//  1. ref resolves to an image manifest (an index, or anything else, is
//     refused) of at most MaxManifestBytes; by digest, to that digest;
//  2. the manifest has ArtifactType, a ConfigMediaType config of at most
//     pluginpkg.MaxManifestSize and exactly one LayerMediaType layer of
//     at most MaxLayerBytes, none of them the manifest itself;
//  3. under Options.Policy, a signature referrer of the manifest is
//     signed by a trusted key (require refuses, warn warns, naming the
//     keys found and the policy);
//  4. the config is a valid plugin.json with a command for this host's
//     platform (pluginpkg.HostPlatform);
//  5. the layer is downloaded.
//
// Every blob is verified against its digest and size as it is read: a
// tampered blob is refused. Errors are *RefusedError, but for a reference
// that does not parse and a registry or layout that cannot be reached or
// does not have it. The caller installs Fetched.Archive with
// InstallSource (which checks every entry) and closes it.
func Fetch(ctx context.Context, ref string, opts Options) (*Fetched, error) {
	r, err := ParseReference(ref)
	if err != nil {
		return nil, err
	}
	src, err := opts.open(ctx, r)
	var refused *RefusedError
	if errors.As(err, &refused) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("artifact %s: %w", ref, err)
	}
	refuse := func(err error, format string, args ...any) error {
		return &RefusedError{Reference: ref, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	a, err := inspect(ctx, src, r, refuse)
	if err != nil {
		return nil, err
	}
	f := &Fetched{Reference: r, Digest: a.desc.Digest, Origin: r.Pinned(a.desc.Digest), ManifestBytes: a.config}
	if f.Verified, err = verifyArtifact(ctx, src, a.desc, opts.Policy, refuse); err != nil {
		return nil, err
	}
	f.Manifest, err = pluginpkg.Parse("plugin.json (the artifact's config)", a.config)
	if err != nil {
		return nil, refuse(err, "config: %v", err)
	}
	if msg := f.Manifest.Runtime.NoPlatform(); msg != "" {
		return nil, refuse(nil, "package %s %s: %s", f.Manifest.Name, f.Manifest.Version, msg)
	}
	if f.Archive, err = download(ctx, src, a.layer, opts.TempDir, refuse); err != nil {
		return nil, err
	}
	return f, nil
}

// artifact is a package artifact's manifest, checked, and its config.
type artifact struct {
	desc   ocispec.Descriptor
	layer  ocispec.Descriptor
	config []byte
}

// refuser builds a *RefusedError.
type refuser func(err error, format string, args ...any) error

// inspect resolves r in src and checks its manifest and config (steps 1
// and 2 of Fetch, and reads the config).
func inspect(ctx context.Context, src source, r Reference, refuse refuser) (*artifact, error) {
	desc, err := src.Resolve(ctx, r.target())
	if err != nil {
		return nil, fmt.Errorf("artifact %s: resolve: %w", r, err)
	}
	switch {
	case r.Digest != "" && desc.Digest != r.Digest:
		return nil, refuse(nil, "resolved to %s, not the digest asked for", desc.Digest)
	case desc.MediaType == ocispec.MediaTypeImageIndex:
		return nil, refuse(nil, "%s is an image index, not a package artifact (an image manifest of artifactType %s)", desc.Digest, ArtifactType)
	case desc.MediaType != ocispec.MediaTypeImageManifest:
		return nil, refuse(nil, "%s is a %q, not a package artifact (an image manifest of artifactType %s)", desc.Digest, desc.MediaType, ArtifactType)
	}
	data, err := readBlob(ctx, src, desc, MaxManifestBytes, "manifest", refuse)
	if err != nil {
		return nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, refuse(err, "manifest %s: %v", desc.Digest, err)
	}
	if err := checkManifest(desc, &m); err != "" {
		return nil, refuse(nil, "manifest %s: %s", desc.Digest, err)
	}
	config, err := readBlob(ctx, src, m.Config, pluginpkg.MaxManifestSize, "config", refuse)
	if err != nil {
		return nil, err
	}
	return &artifact{desc: desc, layer: m.Layers[0], config: config}, nil
}

// checkManifest returns what makes m, the manifest desc describes, other
// than a package artifact, or "".
func checkManifest(desc ocispec.Descriptor, m *ocispec.Manifest) string {
	switch {
	case m.MediaType != ocispec.MediaTypeImageManifest:
		return fmt.Sprintf("mediaType is %q, not %q", m.MediaType, ocispec.MediaTypeImageManifest)
	case m.ArtifactType != ArtifactType:
		return fmt.Sprintf("artifactType is %q, not %q: not a package artifact", m.ArtifactType, ArtifactType)
	case m.Config.MediaType != ConfigMediaType:
		return fmt.Sprintf("config.mediaType is %q, not %q", m.Config.MediaType, ConfigMediaType)
	case len(m.Layers) != 1:
		return fmt.Sprintf("has %d layers; a package artifact has one", len(m.Layers))
	case m.Layers[0].MediaType != LayerMediaType:
		return fmt.Sprintf("layers[0].mediaType is %q, not %q", m.Layers[0].MediaType, LayerMediaType)
	case m.Config.Digest == desc.Digest || m.Layers[0].Digest == desc.Digest:
		return "refers to itself"
	case m.Layers[0].Size > MaxLayerBytes || m.Layers[0].Size < 0:
		return fmt.Sprintf("layers[0] is %s, more than the %s a package may hold",
			homefile.Size(m.Layers[0].Size), homefile.Size(MaxLayerBytes))
	}
	return ""
}

// readBlob reads the blob desc describes, of at most limit bytes, into
// memory, verified against its size and digest.
func readBlob(ctx context.Context, src source, desc ocispec.Descriptor, limit int64, what string, refuse refuser) ([]byte, error) {
	var buf bytes.Buffer
	if err := copyBlob(ctx, src, desc, limit, what, &buf, refuse); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// copyBlob copies the blob desc describes to w: at most limit bytes,
// refused before it is read when desc claims more, and verified against
// desc's size and digest as it is read.
func copyBlob(ctx context.Context, src source, desc ocispec.Descriptor, limit int64, what string, w io.Writer, refuse refuser) error {
	if desc.Size > limit || desc.Size < 0 {
		return refuse(nil, "%s %s is %s, more than the %s allowed", what, desc.Digest, homefile.Size(desc.Size), homefile.Size(limit))
	}
	if err := desc.Digest.Validate(); err != nil {
		return refuse(err, "%s digest %q: %v", what, desc.Digest, err)
	}
	rc, err := src.Fetch(ctx, desc)
	if err != nil {
		return fmt.Errorf("%s %s: fetch: %w", what, desc.Digest, err)
	}
	defer rc.Close()
	v := desc.Digest.Verifier()
	n, err := io.Copy(io.MultiWriter(w, v), io.LimitReader(rc, desc.Size+1))
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: fetch: %w", what, desc.Digest, err)
	case n != desc.Size:
		return refuse(nil, "%s %s holds %d bytes, not the %d its descriptor says (tampered or truncated)", what, desc.Digest, n, desc.Size)
	case !v.Verified():
		return refuse(nil, "%s does not match its digest %s (tampered)", what, desc.Digest)
	}
	return nil
}

// download copies the layer into a new temporary file in dir (the
// system's when empty), verified, and returns its path.
func download(ctx context.Context, src source, layer ocispec.Descriptor, dir string, refuse refuser) (string, error) {
	f, err := os.CreateTemp(dir, "extkernel-artifact-*.tar.gz")
	if err != nil {
		return "", err
	}
	err = copyBlob(ctx, src, layer, MaxLayerBytes, "layer", f, refuse)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
