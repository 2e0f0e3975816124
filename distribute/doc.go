// Package distribute moves plugin packages through OCI registries and OCI
// image layout directories: Pack builds a package artifact, Push copies it
// to a registry, Fetch resolves a reference, checks the artifact and
// downloads its package archive for pluginpkg.InstallSource. Registry and
// layout access is oras-go's (oras.land/oras-go/v2); credentials are the
// registry's standard ones, read from the docker configuration
// ($DOCKER_CONFIG/config.json, else ~/.docker/config.json, and its
// credential helpers).
//
// Only kernelctl and hosts that distribute packages import this package:
// the kernel never does, so a host embedding it does not carry oras-go
// (TestKernelDoesNotDependOnDistribute checks `go list -deps ./kernel`).
//
// # Artifact
//
// A package artifact is one OCI image manifest (docs/manifest.md,
// "Package artifacts") with artifactType ArtifactType, whose config
// (ConfigMediaType) is the package's plugin.json as its bytes, and whose
// one layer (LayerMediaType) is the package as a gzip-compressed tar
// archive, as pluginpkg.Pack writes it. Every platform the manifest's
// runtime.platforms names travels in the one layer. The same package
// directory packs to the same bytes, so to the same manifest digest.
//
// # Signatures
//
// Sign adds a signature to an artifact in a layout: a Sigstore bundle
// (BundleMediaType) of an ECDSA P-256 signature over the artifact's
// manifest, naming the key (NewSigner) or carrying its certificate
// (NewCertificateSigner), stored as an OCI referrer whose subject is the
// artifact; Push copies it. Fetch verifies signatures with sigstore-go
// under Options.Policy (LoadPolicy of the host config's policy for the
// reference: docs/security.md, "Artifact signatures") after it reads the
// manifest and before it reads the config or the layer: a key's against
// the policy's keys; a certificate's against its identities (issuer and
// subject) and its trusted root file, with the checks the root calls for
// (a transparency log entry, a timestamp, an SCT; or, when the root
// holds no log and no timestamp authority, the certificate valid at the
// time of verification). Nothing is fetched online.
//
// # References
//
// A reference names an artifact (ParseReference):
//
//   - oci://REGISTRY/REPOSITORY:TAG or oci://REGISTRY/REPOSITORY@sha256:HEX
//   - oci-layout:PATH:TAG or oci-layout:PATH@sha256:HEX, an OCI image
//     layout directory (for air-gapped hosts)
//
// Reference.Pinned is the same artifact by digest, which the state file
// records as the package's origin.
//
// # Errors
//
// An artifact Fetch refuses is a *RefusedError (errors.Is ErrRefused)
// naming the reference and the reason: not a package artifact, larger than
// its bound, a blob whose bytes do not match its digest, no command for
// this host's platform, a config and a layer that disagree. Fetch checks
// every bound before it reads, and verifies every byte it reads against
// its digest before returning it.
//
// # Concurrency
//
// Every function may be called from several goroutines; none keeps state
// between calls.
package distribute
