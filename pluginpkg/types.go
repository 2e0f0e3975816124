package pluginpkg

import (
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
)

// ManifestFile is the file name of a package manifest inside its directory.
const ManifestFile = "plugin.json"

// FormatVersion is the manifest format version this build understands. A
// manifest declares it in "format"; other values are rejected with a message
// saying which side to upgrade.
const FormatVersion = 1

// Manifest is a parsed, validated plugin.json. Parse returns a Manifest only
// together with a nil error, so every field here is valid: versions and
// constraints are parsed, IDs follow their grammar.
type Manifest struct {
	// Format is the manifest format version ("format" in JSON).
	Format int
	// Name is the package name: 1 to 64 bytes of [a-z0-9._-], starting
	// with a letter or digit.
	Name string
	// Version is the package version, a strict semantic version.
	Version *semver.Version
	// Description is free text; empty when the manifest has none.
	Description string
	// Runtime is nil for a declarative-only package.
	Runtime *Runtime
	// Provides lists the capabilities the package provides, keys unique.
	Provides []capability.Provided
	// Methods holds the callable methods of the capabilities in Provides
	// whose entry lists them (provides[].methods): for each such
	// capability, each method name (an identifier) mapped to the
	// plugin-local ref of the provider implementing it. A capability
	// without an entry has no callable methods; nil when no entry lists
	// any. Only a package with a runtime may list methods. Every ref must
	// be a provider the plugin declares in its handshake (checked when a
	// generation is built, docs/architecture.md).
	Methods map[capability.Key]map[string]string
	// Requires lists the capabilities it needs, keys unique and never one
	// it provides. A requirement without a version has the constraint "*".
	Requires []capability.Requirement
	// Kernel is the range of protocol versions the plugin supports; nil when
	// the manifest does not say (any version).
	Kernel *semver.Constraints
	// KernelText is Kernel as written in the manifest, for messages.
	KernelText string
	// Permissions is what the plugin asks to reach when it runs confined
	// ("permissions"); nil when the manifest declares none. Only a package
	// with a runtime may declare them.
	Permissions *Permissions
}

// Runtime says how to start a package's sidecar process.
type Runtime struct {
	// Command is the executable this host runs, as written in the
	// manifest: the runtime.platforms entry for HostPlatform when there is
	// one, else runtime.command (DefaultCommand); empty when neither (the
	// package cannot run here: NoPlatform says why, loading and
	// installing refuse it). Use Package.CommandPath for the resolved
	// path.
	Command string
	// DefaultCommand is runtime.command as written when the manifest also
	// gives runtime.platforms: the command of every platform they do not
	// name; empty when it gives platforms alone, and when it gives no
	// platforms (Command is then runtime.command).
	DefaultCommand string
	// Platforms maps a platform ("linux/amd64", GOOS/GOARCH) to the
	// command run there (runtime.platforms), under runtime.command's
	// rules; nil when the manifest gives none. A package packs the
	// executables of several platforms this way (kernelctl pack).
	Platforms map[string]string
	// Args are passed to the command as they are; there is no shell.
	Args []string
	// Env holds extra environment variables for the sidecar, merged over the
	// kernel's allowlisted environment.
	Env map[string]string
	// Required is the manifest's default policy: a required package that
	// fails to start fails the whole generation. Host config may override it.
	Required bool
	// Priority orders this package's interceptors; in [-1000, 1000].
	Priority int
	// Intercepts lists the points the plugin may contribute interceptors to.
	Intercepts []contribution.Point
	// Replaces lists the strategy slots the plugin may claim.
	Replaces []contribution.Slot
	// Contributes lists, per host-declared kind, the keys the plugin may
	// declare contributions of in its handshake (runtime.contributes,
	// protocol 1.1), and under contribution.KindProvider and KindAction
	// the provider refs and action IDs it declares; nil when the manifest
	// lists none. Neither interceptor nor strategy is a key (Intercepts
	// and Replaces list theirs), and every list is non-empty, of
	// identifiers, without duplicates. A handshake must declare exactly
	// the providers and actions listed, when they are (docs/manifest.md).
	Contributes map[contribution.Kind][]string
	// Activation is when the sidecar starts: ActivationEager (at the
	// build, the default, also for "") or ActivationLazy (on first use,
	// its contributions published from its declarations before it runs).
	// Host config may override it.
	Activation string
	// HandshakeTimeout bounds the handshake; zero means the kernel default.
	HandshakeTimeout time.Duration
}

// Activations a manifest's runtime.activation may name.
const (
	// ActivationEager starts the sidecar when its generation is built.
	ActivationEager = "eager"
	// ActivationLazy starts it on first use: the generation publishes its
	// declared contributions without a process (docs/manifest.md,
	// "Activation").
	ActivationLazy = "lazy"
)

// Package is one installed package: its directory, manifest and state.
type Package struct {
	// Name is the manifest name, equal to the directory name.
	Name string
	// Dir is the absolute package directory (symlinks in the home resolved).
	Dir string
	// ManifestPath is the path used in messages, relative to the home
	// ("packages/redactor/plugin.json").
	ManifestPath string
	// Manifest is the parsed, valid manifest.
	Manifest *Manifest
	// ManifestSHA256 is the lower-case hex sha256 of the manifest file's
	// bytes; reload planning compares it to detect a changed manifest.
	ManifestSHA256 string
	// Enabled is false when the state file disables the package. A package
	// with no state entry is enabled.
	Enabled bool
	// Pin is the package's pin from the state file, or empty: 64 lower-case
	// hex digits pin the runtime executable's sha256; "package:<files>:<command>"
	// pins the package's files and resolved command (IsPackagePin,
	// CheckPackagePin).
	Pin string
	// Digest is the digest of the package's files that InstallSource,
	// Install or Rollback recorded in the state file when it put the
	// package in place (FileDigest.Sum, the <files> part of a package
	// pin), or empty for a package placed otherwise. It is a record, not a
	// check: compare it with FilesDigest to see whether the files changed
	// since; only a pin stops a changed package from starting.
	Digest string
	// Origin is the artifact InstallSource fetched the package from, by
	// digest, as InstallOptions.Origin gave it
	// ("oci://ghcr.io/acme/hello@sha256:…", "oci-layout:/srv/mirror@sha256:…"),
	// recorded in the state file; empty for a package installed from a
	// directory or an archive, or placed otherwise. Rollback restores the
	// origin of the version it restores.
	Origin string
	// Accepted is what the operator accepted that the package may reach
	// when it runs confined, from the state file: what its manifest asked
	// for (Manifest.RequestedPermissions) when it was first installed,
	// upgraded with InstallOptions.AcceptPermissions, or accepted with
	// AcceptPermissions. Nil when none is recorded (a package installed
	// before extkernel recorded acceptances): it counts as having
	// accepted what it asks for now. WidenedPermissions compares.
	Accepted *Permissions
	// Bake is the bake this version is on (an upgrade with
	// InstallOptions.Bake), from the state file; nil when none is in
	// progress. A running kernel watches it and returns to the previous
	// version when it fails (docs/operations.md, "Bake").
	Bake *Bake
}

// Warning is a per-package problem found while loading a home. One broken
// package never stops the others from loading.
type Warning struct {
	// Package is the directory name under packages/ (for a stale state
	// entry, the name in the entry).
	Package string
	// Path is the file the warning is about, relative to the home.
	Path string
	// Message says what is wrong. For an invalid manifest there is one
	// Warning per problem and Message is "field: message".
	Message string
	// Err is the underlying error, if any: the *ValidationError of an invalid
	// manifest (shared by all of that manifest's warnings), or a file system
	// error.
	Err error
	// Disabled is true when the state file disables the package the
	// warning is about (a reload keeps a running plugin whose manifest no
	// longer loads only while it is enabled).
	Disabled bool
}

// String formats the warning as "path: message".
func (w Warning) String() string { return w.Path + ": " + w.Message }

// Installed is the result of LoadInstalled: every loadable package, in name
// order, plus warnings for the ones that could not be loaded.
type Installed struct {
	// Home is the absolute home directory.
	Home string
	// Packages are the loaded packages, enabled or not, sorted by name.
	Packages []*Package
	// Warnings explain every entry that could not be loaded, sorted by
	// package name; see LoadInstalled.
	Warnings []Warning
}
