package distribute

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/extkernel/extkernel/pluginpkg"
)

// noCreds keeps tests away from the machine's docker configuration.
var noCreds = Options{PlainHTTP: true, Credential: auth.StaticCredential("", auth.EmptyCredential)}

// writePackage writes a package whose runtime.platforms runs ./bin/plugin
// on platform, and returns its directory.
func writePackage(t testing.TB, version, platform string) string {
	t.Helper()
	dir := t.TempDir()
	manifest := `{"format": 1, "name": "hello", "version": "` + version + `", "runtime": {"platforms": {"` + platform + `": "./bin/plugin"}}}`
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, pluginpkg.ManifestFile), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "plugin"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startRegistry serves an in-process OCI registry and returns its host.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestPackPushFetchInstall packs a package twice (same digest), pushes it
// to an in-process registry, fetches it by tag and by digest from the
// registry and from the layout, and installs it with its origin.
func TestPackPushFetchInstall(t *testing.T) {
	ctx := context.Background()
	dir := writePackage(t, "1.0.0", pluginpkg.HostPlatform())
	layout := filepath.Join(t.TempDir(), "hello.oci")
	p1, err := Pack(ctx, dir, layout, "")
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Pack(ctx, dir, filepath.Join(t.TempDir(), "again.oci"), "")
	if err != nil {
		t.Fatal(err)
	}
	if p1.Manifest.Digest != p2.Manifest.Digest || p1.Tag != "1.0.0" {
		t.Fatalf("two packs: %s and %s (tag %s)", p1.Manifest.Digest, p2.Manifest.Digest, p1.Tag)
	}
	host := startRegistry(t)
	dest := SchemeOCI + host + "/acme/hello:1.0.0"
	desc, err := Push(ctx, layout, dest, noCreds)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest != p1.Manifest.Digest {
		t.Fatalf("pushed %s, packed %s", desc.Digest, p1.Manifest.Digest)
	}
	for _, ref := range []string{dest, SchemeOCI + host + "/acme/hello@" + desc.Digest.String(),
		p1.Reference(), SchemeLayout + layout + "@" + desc.Digest.String()} {
		t.Run(ref, func(t *testing.T) {
			f, err := Fetch(ctx, ref, noCreds)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Digest != desc.Digest || !strings.HasSuffix(f.Origin, "@"+desc.Digest.String()) {
				t.Errorf("fetched %s, origin %s", f.Digest, f.Origin)
			}
			home := t.TempDir()
			res, err := pluginpkg.InstallSource(home, f.Archive, pluginpkg.InstallOptions{Origin: f.Origin, ExpectManifest: f.ManifestBytes})
			if err != nil {
				t.Fatal(err)
			}
			if res.Package.Origin != f.Origin {
				t.Errorf("origin recorded %q, want %q", res.Package.Origin, f.Origin)
			}
		})
	}
}

// hostile is a layout whose artifact a case spoils.
type hostile struct {
	layout string
	store  *oci.Store
	config ocispec.Descriptor
	layer  ocispec.Descriptor
	man    ocispec.Manifest
}

// newHostile builds a layout holding a package artifact made by hand from
// the manifest json and the archive entries, unpushed until push.
func newHostile(t *testing.T, manifestJSON string, entries map[string]string) *hostile {
	t.Helper()
	h := &hostile{layout: filepath.Join(t.TempDir(), "evil.oci")}
	var err error
	if h.store, err = oci.New(h.layout); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range []string{"plugin.json", "../escape", "bin/plugin"} {
		body, ok := entries[name]
		if !ok {
			continue
		}
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	h.config = h.push(t, ConfigMediaType, []byte(manifestJSON))
	h.layer = h.push(t, LayerMediaType, buf.Bytes())
	h.man = ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: ArtifactType, Config: h.config, Layers: []ocispec.Descriptor{h.layer}}
	return h
}

func (h *hostile) push(t *testing.T, mediaType string, data []byte) ocispec.Descriptor {
	t.Helper()
	d := blob(mediaType, data, nil)
	if err := h.store.Push(context.Background(), d, bytes.NewReader(data)); err != nil && !strings.Contains(err.Error(), "exists") {
		t.Fatal(err)
	}
	return d
}

// tag pushes the manifest and tags it "v1"; it returns the manifest's
// descriptor.
func (h *hostile) tag(t *testing.T) ocispec.Descriptor {
	t.Helper()
	data, _ := json.Marshal(h.man)
	d := h.push(t, ocispec.MediaTypeImageManifest, data)
	if err := h.store.Tag(context.Background(), d, "v1"); err != nil {
		t.Fatal(err)
	}
	return d
}

// blobFile is the path of d's blob in the layout.
func (h *hostile) blobFile(d digest.Digest) string {
	return filepath.Join(h.layout, "blobs", d.Algorithm().String(), d.Encoded())
}

// TestHostileArtifacts: each artifact is refused with its reason, and
// nothing is written to the home.
func TestHostileArtifacts(t *testing.T) {
	host := pluginpkg.HostPlatform()
	good := `{"format": 1, "name": "evil", "version": "1.0.0", "runtime": {"platforms": {"` + host + `": "./bin/plugin"}}}`
	other := "plan9/386"
	if host == other {
		other = "linux/amd64"
	}
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, h *hostile)
		want  string
	}{
		{"missing platform", func(t *testing.T, h *hostile) {
			h.man.Config = h.push(t, ConfigMediaType, []byte(strings.Replace(good, host, other, 1)))
		}, "no command for this host's platform " + host},
		{"huge layer", func(t *testing.T, h *hostile) { h.man.Layers[0].Size = 1 << 40 }, "more than the 256 MiB a package may hold"},
		{"two layers", func(t *testing.T, h *hostile) { h.man.Layers = append(h.man.Layers, h.layer) }, "has 2 layers"},
		{"not a package", func(t *testing.T, h *hostile) { h.man.ArtifactType = "application/vnd.example" }, "not a package artifact"},
		{"recursive index", func(t *testing.T, h *hostile) {
			inner, _ := json.Marshal(h.man)
			d := h.push(t, ocispec.MediaTypeImageManifest, inner)
			idx, _ := json.Marshal(ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex,
				Manifests: []ocispec.Descriptor{d}})
			outer := h.push(t, ocispec.MediaTypeImageIndex, idx)
			h.store.Tag(context.Background(), outer, "v1")
		}, "is an image index, not a package artifact"},
		{"path escape", func(t *testing.T, h *hostile) {
			n := newHostile(t, good, map[string]string{"plugin.json": good, "../escape": "x", "bin/plugin": "x"})
			h.man.Layers[0] = n.layer
			os.MkdirAll(filepath.Dir(h.blobFile(n.layer.Digest)), 0o755)
			data, _ := os.ReadFile(n.blobFile(n.layer.Digest))
			os.WriteFile(h.blobFile(n.layer.Digest), data, 0o644)
		}, `entry "../escape": the path leaves the package (..) (rule path)`},
		{"config and layer disagree", func(t *testing.T, h *hostile) {
			h.man.Config = h.push(t, ConfigMediaType, []byte(strings.Replace(good, "evil", "evil2", 1)))
		}, "the manifest differs from the one the artifact's config holds"},
		{"tampered layer", func(t *testing.T, h *hostile) {
			os.WriteFile(h.blobFile(h.layer.Digest), bytes.Repeat([]byte("x"), int(h.layer.Size)), 0o644)
		}, "layer does not match its digest"},
		{"manifest swapped", func(t *testing.T, h *hostile) {
			d := h.tag(t)
			swapped := h.man
			swapped.Annotations = map[string]string{"swapped": "yes"}
			data, _ := json.Marshal(swapped)
			os.WriteFile(h.blobFile(d.Digest), data, 0o644)
		}, "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostile(t, good, map[string]string{"plugin.json": good, "bin/plugin": "#!/bin/sh\n"})
			tc.spoil(t, h)
			if _, err := h.store.Resolve(context.Background(), "v1"); err != nil {
				h.tag(t)
			}
			home := t.TempDir()
			err := fetchInstall(home, SchemeLayout+h.layout+":v1")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if left, _ := os.ReadDir(home); len(left) != 0 {
				t.Errorf("the refused artifact left %v in the home", left)
			}
		})
	}
}

// fetchInstall fetches ref and installs it into home, as kernelctl does.
func fetchInstall(home, ref string) error {
	f, err := Fetch(context.Background(), ref, noCreds)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = pluginpkg.InstallSource(home, f.Archive, pluginpkg.InstallOptions{Origin: f.Origin, ExpectManifest: f.ManifestBytes})
	return err
}

// TestParseReference: the grammar of references, and its errors.
func TestParseReference(t *testing.T) {
	d := digest.FromString("x")
	for _, tc := range []struct{ in, want string }{
		{"oci://ghcr.io/acme/hello:1.0.0", "oci://ghcr.io/acme/hello:1.0.0"},
		{"oci://localhost:5000/hello@" + d.String(), "oci://localhost:5000/hello@" + d.String()},
		{"oci-layout:/srv/m.oci:v1", "oci-layout:/srv/m.oci:v1"},
		{"oci-layout:/srv/m.oci@" + d.String(), "oci-layout:/srv/m.oci@" + d.String()},
		{"oci://ghcr.io/acme/hello", "error: names no tag or digest"},
		{"oci-layout:/srv/m.oci", "error: names no tag or digest"},
		{"oci-layout:/srv/m.oci@sha256:12", "error: digest"},
		{"./hello", "error: not an artifact reference"},
	} {
		r, err := ParseReference(tc.in)
		got := r.String()
		if err != nil {
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, tc.want) && !strings.Contains(got, strings.TrimPrefix(tc.want, "error: ")) {
			t.Errorf("%s: got %s, want %s", tc.in, got, tc.want)
		}
	}
	if !errors.Is(&RefusedError{}, ErrRefused) {
		t.Error("RefusedError is not ErrRefused")
	}
}
