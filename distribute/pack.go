package distribute

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Media types of a package artifact.
const (
	// ArtifactType is the artifactType of a package artifact's manifest.
	ArtifactType = "application/vnd.extkernel.package.v1"
	// ConfigMediaType is its config: the package's plugin.json bytes.
	ConfigMediaType = "application/vnd.extkernel.package.config.v1+json"
	// LayerMediaType is its one layer: the package, a gzip-compressed tar
	// archive as pluginpkg.Pack writes it.
	LayerMediaType = "application/vnd.extkernel.package.layer.v1.tar+gzip"
)

// AnnotationPlatforms lists, comma-separated and sorted, the platforms
// whose command the artifact carries (runtime.platforms); absent when the
// package runs one command everywhere or has no runtime.
const AnnotationPlatforms = "dev.extkernel.platforms"

// Packed is what Pack wrote.
type Packed struct {
	// Name and Version are the package's.
	Name, Version string
	// Platforms are the platforms of its runtime.platforms, sorted; nil
	// when it names none.
	Platforms []string
	// Layout is the layout directory, Tag the tag Pack gave the artifact.
	Layout, Tag string
	// Manifest is the artifact's manifest descriptor: its Digest is the
	// artifact's identity, the same for every pack of the same package.
	Manifest ocispec.Descriptor
	// Layer is the package archive's descriptor.
	Layer ocispec.Descriptor
}

// Reference returns the oci-layout: reference to the packed artifact by
// tag.
func (p *Packed) Reference() string {
	return Reference{Layout: true, Path: p.Layout, Tag: p.Tag}.String()
}

// Pack builds the package artifact of the package directory dir and
// stores it in the OCI image layout directory layout (created when it does
// not exist; other artifacts it holds are kept), tagged tag (the
// package's version when tag is empty), replacing an artifact of that tag.
// The package is checked and archived by pluginpkg.Pack, whose errors it
// returns as they are. The artifact carries no timestamp: the same package
// gives the same manifest digest.
func Pack(ctx context.Context, dir, layout, tag string) (*Packed, error) {
	var archive bytes.Buffer
	pk, err := pluginpkg.Pack(dir, &archive)
	if err != nil {
		return nil, err
	}
	m := pk.Manifest
	out := &Packed{Name: m.Name, Version: m.Version.String(), Layout: layout, Tag: tag}
	if out.Tag == "" {
		out.Tag = strings.ReplaceAll(out.Version, "+", "_") // a tag has no "+"
	}
	if m.Runtime != nil && len(m.Runtime.Platforms) > 0 {
		out.Platforms = slices.Sorted(maps.Keys(m.Runtime.Platforms))
	}
	config := blob(ConfigMediaType, pk.ManifestBytes, nil)
	out.Layer = blob(LayerMediaType, archive.Bytes(), map[string]string{
		ocispec.AnnotationTitle: out.Name + "-" + out.Version + ".tar.gz"})
	manifest, err := json.Marshal(ocispec.Manifest{
		Versioned:    specs.Versioned{SchemaVersion: 2},
		MediaType:    ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType,
		Config:       config,
		Layers:       []ocispec.Descriptor{out.Layer},
		Annotations:  out.annotations(m),
	})
	if err != nil {
		return nil, err
	}
	out.Manifest = blob(ocispec.MediaTypeImageManifest, manifest, nil)
	out.Manifest.ArtifactType = ArtifactType
	store, err := oci.NewWithContext(ctx, layout)
	if err != nil {
		return nil, fmt.Errorf("pack %s: layout %s: %w", dir, layout, err)
	}
	for _, b := range []struct {
		desc ocispec.Descriptor
		data []byte
	}{{config, pk.ManifestBytes}, {out.Layer, archive.Bytes()}, {out.Manifest, manifest}} {
		if err := store.Push(ctx, b.desc, bytes.NewReader(b.data)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
			return nil, fmt.Errorf("pack %s: layout %s: %w", dir, layout, err)
		}
	}
	if err := store.Tag(ctx, out.Manifest, out.Tag); err != nil {
		return nil, fmt.Errorf("pack %s: layout %s: tag %q: %w", dir, layout, out.Tag, err)
	}
	return out, nil
}

// annotations are the manifest's: the package's name, version and
// platforms; no time.
func (p *Packed) annotations(m *pluginpkg.Manifest) map[string]string {
	a := map[string]string{ocispec.AnnotationTitle: p.Name, ocispec.AnnotationVersion: p.Version}
	if m.Description != "" {
		a[ocispec.AnnotationDescription] = m.Description
	}
	if len(p.Platforms) > 0 {
		a[AnnotationPlatforms] = strings.Join(p.Platforms, ",")
	}
	return a
}

// blob describes data of mediaType.
func blob(mediaType string, data []byte, annotations map[string]string) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data)), Annotations: annotations}
}
