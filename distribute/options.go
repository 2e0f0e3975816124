package distribute

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/retry"

	"github.com/extkernel/extkernel/internal/homefile"
)

// Options configure registry access. The zero value reaches registries
// over HTTPS with the docker configuration's credentials.
type Options struct {
	// PlainHTTP reaches registries over plain HTTP, as a local test
	// registry serves; never for a registry across a network.
	PlainHTTP bool
	// Credential, when set, gives the credentials of a registry host;
	// nil reads the docker configuration ($DOCKER_CONFIG/config.json,
	// else ~/.docker/config.json, and its credential helpers).
	Credential auth.CredentialFunc
	// TempDir is where Fetch downloads an archive; the system's
	// temporary directory when empty. It MUST NOT be inside a home.
	TempDir string
	// Policy is the signature policy Fetch verifies the artifact under
	// (LoadPolicy of config.Config.SignaturePolicyFor the reference);
	// nil verifies nothing.
	Policy *Policy
}

// source is what Fetch reads from: a registry's repository or a layout.
type source interface {
	Resolve(ctx context.Context, reference string) (ocispec.Descriptor, error)
	Fetch(ctx context.Context, target ocispec.Descriptor) (io.ReadCloser, error)
}

// open returns the repository or layout r names. A layout is opened
// read-only (nothing is written to it) after its index.json is checked.
func (o Options) open(ctx context.Context, r Reference) (source, error) {
	if r.Layout {
		if err := checkIndex(r.Path); err != nil {
			return nil, &RefusedError{Reference: r.String(), Reason: err.Error(), Err: err}
		}
		return oci.NewFromFS(ctx, os.DirFS(r.Path))
	}
	return o.repository(r)
}

// repository returns the registry repository r names, authenticated with
// o's credentials.
func (o Options) repository(r Reference) (*remote.Repository, error) {
	repo, err := remote.NewRepository(r.Repository)
	if err != nil {
		return nil, err
	}
	repo.PlainHTTP = o.PlainHTTP
	cred := o.Credential
	if cred == nil {
		store, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("docker credentials: %w", err)
		}
		cred = credentials.Credential(store)
	}
	repo.Client = &auth.Client{Client: retry.DefaultClient, Cache: auth.NewCache(), Credential: cred}
	return repo, nil
}

// checkIndex refuses a layout whose index.json oras would read beyond the
// bounds Fetch keeps, or whose manifests are not what it says: an
// index.json over MaxManifestBytes, or one listing a manifest larger than
// that or whose bytes do not match its digest (oras reads every listed
// manifest when it opens a layout).
func checkIndex(dir string) error {
	p := filepath.Join(dir, ocispec.ImageIndexFile)
	data, err := homefile.Read(p, MaxManifestBytes)
	if err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(data, &idx); err != nil {
		return fmt.Errorf("layout %s: index.json: %w", dir, err)
	}
	for i, d := range idx.Manifests {
		if d.Size > MaxManifestBytes || d.Size < 0 {
			return fmt.Errorf("layout %s: index.json: manifests[%d] is %s, more than the %s a manifest may hold",
				dir, i, homefile.Size(d.Size), homefile.Size(MaxManifestBytes))
		}
		if err := d.Digest.Validate(); err != nil {
			return fmt.Errorf("layout %s: index.json: manifests[%d]: %w", dir, i, err)
		}
		data, err := homefile.Read(filepath.Join(dir, "blobs", d.Digest.Algorithm().String(), d.Digest.Encoded()), MaxManifestBytes)
		switch {
		case err != nil:
			return fmt.Errorf("layout %s: index.json: manifests[%d]: %w", dir, i, err)
		case int64(len(data)) != d.Size || d.Digest.Algorithm().FromBytes(data) != d.Digest:
			return fmt.Errorf("layout %s: index.json: manifests[%d]: the blob does not match its digest %s (tampered or swapped)", dir, i, d.Digest)
		}
	}
	return nil
}
