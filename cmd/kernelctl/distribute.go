package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/distribute"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

// packOutput is the --json schema of pack (docs/cli.md).
type packOutput struct {
	Name      string   `json:"name"`
	Version   string   `json:"version"`
	Platforms []string `json:"platforms"`
	Layout    string   `json:"layout"`
	Tag       string   `json:"tag"`
	Reference string   `json:"reference"`
	Digest    string   `json:"digest"`
	Size      int64    `json:"size"`
}

func newPackCmd(g *globals) *cobra.Command {
	var output, tag, signKey string
	cmd := &cobra.Command{
		Use: "pack DIR",
		Example: `  kernelctl pack ./hello
  kernelctl pack ./hello --output dist/hello.oci --tag 1.0.0
  kernelctl pack ./hello --json`,
		Short: "Build a package artifact (an OCI image layout) from a package directory",
		Long: `Check the package directory DIR as install checks a source, and store it as a
package artifact in the OCI image layout directory --output (default
NAME-VERSION.oci beside DIR's parent's working directory; other artifacts of an
existing layout are kept), tagged --tag (default the package's version). The
artifact is one OCI image manifest whose config is plugin.json and whose one
layer is the package as a tar.gz with sorted entries, fixed times, owners and
modes (docs/manifest.md, "Package artifacts"): the same package packs to the
same digest on any machine. Every executable runtime.platforms names travels in
it; each MUST be in DIR. 'kernelctl push' sends it to a registry, 'kernelctl
install oci-layout:PATH:TAG' installs it. Exit code 0 when packed, 1 on any
error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.pack(cmd.Context(), args[0], output, tag, signKey)
		},
	}
	cmd.Flags().StringVar(&signKey, "sign-key", "", "sign the artifact with this PEM private key (ECDSA P-256), stored beside it as a Sigstore bundle that push copies")
	cmd.Flags().StringVarP(&output, "output", "o", "", "the OCI image layout directory to store the artifact in (default NAME-VERSION.oci)")
	cmd.Flags().StringVar(&tag, "tag", "", "the tag of the artifact in the layout (default the package's version)")
	return cmd
}

// pack runs `kernelctl pack`.
func (g *globals) pack(ctx context.Context, dir, output, tag, signKey string) error {
	if output == "" {
		m, err := pluginpkg.ParseFile(filepath.Join(dir, pluginpkg.ManifestFile))
		if err != nil {
			return err
		}
		output = m.Name + "-" + m.Version.String() + ".oci"
	}
	var signer *distribute.Signer
	if signKey != "" {
		var err error
		if signer, err = distribute.LoadSigner(signKey); err != nil {
			return err
		}
	}
	p, err := distribute.Pack(context.WithoutCancel(ctx), dir, output, tag)
	if err != nil {
		return err
	}
	if signer != nil {
		if _, err := distribute.Sign(context.WithoutCancel(ctx), p.Layout, p.Tag, signer); err != nil {
			return err
		}
	}
	out := packOutput{Name: p.Name, Version: p.Version, Platforms: p.Platforms, Layout: p.Layout, Tag: p.Tag,
		Reference: p.Reference(), Digest: p.Manifest.Digest.String(), Size: p.Layer.Size}
	if out.Platforms == nil {
		out.Platforms = []string{}
	}
	if g.json {
		return g.printJSON(out)
	}
	platforms := "every platform (runtime.command)"
	if len(p.Platforms) > 0 {
		platforms = strings.Join(p.Platforms, ", ")
	}
	fmt.Fprintf(g.stdout, "%s %s: packed into %s, tag %s\n  digest %s\n  platforms %s\n  package archive %d bytes\nnext: kernelctl push %s REGISTRY/REPOSITORY:%s\n",
		p.Name, p.Version, p.Layout, p.Tag, out.Digest, platforms, out.Size, p.Layout, p.Tag)
	return nil
}

// pushOutput is the --json schema of push (docs/cli.md).
type pushOutput struct {
	Artifact  string `json:"artifact"`
	Reference string `json:"reference"`
	Digest    string `json:"digest"`
	Pinned    string `json:"pinned"`
}

func newPushCmd(g *globals) *cobra.Command {
	var plainHTTP bool
	cmd := &cobra.Command{
		Use: "push ARTIFACT oci://REGISTRY/REPOSITORY:TAG",
		Example: `  kernelctl push hello-1.0.0.oci oci://ghcr.io/acme/hello:1.0.0
  kernelctl push oci-layout:dist/plugins.oci:hello-1.0.0 oci://registry.example.com/plugins/hello:1.0.0`,
		Short: "Push a package artifact to an OCI registry",
		Long: `Copy the package artifact ARTIFACT (a layout directory 'kernelctl pack' wrote,
holding one tag, or oci-layout:PATH:TAG) to the registry repository and tag
REFERENCE (the oci:// prefix may be left out), with the credentials of the
docker configuration ($DOCKER_CONFIG/config.json, else ~/.docker/config.json,
and its credential helpers: 'docker login' or 'oras login' writes them). The
artifact is checked first as install checks it; the digest it has in the
registry is the one pack printed. Exit code 0 when pushed, 1 on any error.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dest := args[1]
			if !strings.HasPrefix(dest, distribute.SchemeOCI) {
				dest = distribute.SchemeOCI + dest
			}
			desc, err := distribute.Push(cmd.Context(), args[0], dest, distribute.Options{PlainHTTP: plainHTTP})
			if err != nil {
				return err
			}
			ref, _ := distribute.ParseReference(dest)
			out := pushOutput{Artifact: args[0], Reference: dest, Digest: desc.Digest.String(), Pinned: ref.Pinned(desc.Digest)}
			if g.json {
				return g.printJSON(out)
			}
			fmt.Fprintf(g.stdout, "pushed %s to %s\n  digest %s\nnext: kernelctl install %s\n", out.Artifact, out.Reference, out.Digest, out.Pinned)
			return nil
		},
	}
	cmd.Flags().BoolVar(&plainHTTP, "plain-http", false, "reach the registry over plain HTTP (a local test registry)")
	return cmd
}

// fetchArtifact fetches the artifact reference src names (docs/cli.md,
// "kernelctl install") into a temporary archive: it returns the archive
// to install, the install options that record its origin and check its
// manifest, and done, which removes the archive. A src that is not a
// reference is returned as it is.
func fetchArtifact(ctx context.Context, src string, f installFlags, sig *config.SignaturePolicy, opts pluginpkg.InstallOptions) (string, pluginpkg.InstallOptions, *distribute.Fetched, func(), error) {
	if !distribute.IsReference(src) {
		return src, opts, nil, func() {}, nil
	}
	dopts := distribute.Options{PlainHTTP: f.plainHTTP}
	if sig != nil {
		p, err := distribute.LoadPolicy(*sig)
		if err != nil {
			return "", opts, nil, nil, err
		}
		dopts.Policy = p
	}
	fetched, err := distribute.Fetch(ctx, src, dopts)
	if err != nil {
		return "", opts, nil, nil, err
	}
	opts.Origin, opts.ExpectManifest = fetched.Origin, fetched.ManifestBytes
	return fetched.Archive, opts, fetched, func() { fetched.Close() }, nil
}

// signatureText is install's signature line: what verification found,
// "" when no policy applied.
func signatureText(v *distribute.Verified) string {
	switch {
	case v == nil:
		return ""
	case v.Signed && v.Issuer != "":
		return "verified: signed by issuer " + v.Issuer + " subject " + v.Subject
	case v.Signed:
		return "verified: signed by key " + v.Key + " (" + v.Hint + ")"
	case v.Warning != "":
		return "unverified: " + v.Warning
	}
	return ""
}

// sourceKind is install's source_kind of an artifact reference src.
func sourceKind(src string, res *pluginpkg.InstallResult) string {
	switch {
	case strings.HasPrefix(src, distribute.SchemeOCI):
		return "oci"
	case strings.HasPrefix(src, distribute.SchemeLayout):
		return "oci-layout"
	}
	return string(res.Source)
}

// planArtifact runs `plan SOURCE`: upgrade --dry-run's output with plan's
// exit codes.
func (g *globals) planArtifact(src string, plainHTTP bool) error {
	out, err := g.install(src, installFlags{upgrade: true, dryRun: true, acceptPermissions: false, plainHTTP: plainHTTP}, "plan")
	if err != nil {
		return err
	}
	switch {
	case len(out.Plan.Problems) > 0:
		return failed
	case out.Plan.Changed():
		return &exitError{code: exitChanges}
	}
	return nil
}
