// Package pluginpkg owns plugin packages on disk: the plugin.json manifest
// schema, its parsing and validation with field paths, and the installed state
// of a home directory (enabled, disabled, pinned), the digest of a
// package's files (FilesDigest, CommandDigest, PackagePin), and installing
// packages from directories and archives (InstallSource).
//
// It never starts processes. docs/manifest.md is the manifest reference;
// docs/manifest.schema.json is a JSON Schema for editors.
//
// # Manifests
//
// Parse and ParseFile decode a plugin.json and validate it against the
// schema by hand, so that every problem is reported at once, each with its
// JSON field path ("requires[1].version"), in document order. Invariants:
//
//   - Parse returns either a *Manifest and a nil error, or nil and a
//     *ValidationError with at least one problem. It never panics, whatever
//     the input (FuzzParse checks this).
//   - Every field of a returned Manifest is valid: versions and constraints
//     are parsed, IDs follow the grammar of internal/ident, the command stays
//     inside the package directory. Manifest.Validate on it returns nil.
//   - The problems, and their order, depend only on the input bytes.
//   - A manifest MUST be UTF-8: a string or key holding a byte that is not
//     is a problem at its field path (never read as U+FFFD), and a leading
//     byte-order mark is a problem of its own.
//
// # Home layout
//
//	<home>/packages/<name>/plugin.json   one directory (or symlink) per package
//	<home>/packages/.previous/<name>/    the version the last upgrade replaced (Rollback)
//	<home>/packages/.staging/            installs in progress; leftovers deleted by the next one
//	<home>/state.json                    {"format":1,"packages":{"<name>":{"enabled":false,"pin":"<pin>","digest":"<hex>"}}}
//	<home>/.state.lock                   flock serializing state writers
//	<home>/run/                          mode 0700: the run lock (LockRun) and kernelctl's admin socket
//
// packages/.staging and packages/.previous MUST be plain directories: one
// that is a symbolic link (deleting or renaming under it would reach
// outside the home) or not a directory is refused, naming it, by
// InstallSource, PreviewInstall, Rollback and Remove before they delete or
// write anything. An entry packages/.previous/<name> may be a link: it is
// what an upgrade of a linked package keeps, and it is only ever moved or
// unlinked.
//
// run/ MUST be a private directory: PrepareRunDir refuses a symbolic link
// and makes one writable by its group or others 0700 (refusing it when
// another user owns it).
//
// A package with no state entry is enabled and unpinned. LoadInstalled
// enumerates a home deterministically (packages in name order); a package
// loads only when its manifest is valid and its name equals its directory
// name, so names are unique. Problems with one package are Warnings, never
// errors: one broken package never stops the rest.
//
// # Lifecycle
//
// InstallSource checks a package source (a directory, a .tar.gz or a .zip:
// every entry against the rules of SourceRule and the bounds of Limits,
// then the manifest) before anything is written, extracts it into
// packages/.staging, syncs it and renames it into place under the home
// lock, recording it enabled with its digest; with InstallOptions.Upgrade
// it replaces an installed version, kept for Rollback. PreviewInstall
// builds the home an install would leave, in a temporary directory, for
// plans. Install is InstallSource with the default options. Enable,
// Disable and Pin edit a package's state entry; Remove deletes the
// package, its previous version and its entry; RemoveChecked and
// DisableChecked first refuse when the host requires the package or
// others need what only it provides (Guard). Callers:
//
//  1. MUST treat an Installed value, and the Packages and Manifests in it,
//     as read-only snapshots: they are shared, not copied, and are not
//     updated by later state changes. Call LoadInstalled again to see them.
//  2. MUST NOT write state.json themselves; the functions here keep it
//     atomic and consistent.
//  3. Should compare Package.ManifestSHA256 and FilesDigest and
//     CommandDigest results to detect changed packages on reload, and check
//     Package.Pin (ExecutableSHA256 for an executable pin, CheckPackagePin
//     for a package pin) before starting one.
//
// # Concurrency
//
// Every function is safe to call from several goroutines and several
// processes at once. Parse, ParseFile, LoadInstalled and the Package methods
// only read. Install, Enable, Disable, Pin and Remove are read-modify-write
// operations on state.json serialized by the home lock, as are InstallSource,
// Rollback, RemoveChecked and DisableChecked: an in-process mutex per home
// path, then an exclusive flock(2) on <home>/.state.lock (lock order: mutex,
// then flock). No update is lost when writers race. State is written
// atomically (a temporary file in the home, fsync, rename over state.json,
// fsync of the home), so a reader such as LoadInstalled never sees a partial
// state file and needs no lock. A package directory and its state entry are
// not changed as one unit, though: LoadInstalled racing Install or Remove may
// see the package before its entry is written or its entry after the package
// is gone (a passing stale-entry warning). A package directory is never seen
// half-written: it is complete before it is renamed in, and an upgrade or
// rollback on Linux exchanges the two directories atomically (elsewhere the
// package is absent between two renames). None of these takes the run lock,
// so they work on the home of a running kernel. The flock is blocking: a
// process that holds it forever stalls the home's writers. On platforms
// without flock only the in-process mutex applies.
//
// # Errors
//
//   - *ValidationError: an invalid manifest (Parse, ParseFile, Install,
//     InstallSource); its Problems are FieldErrors with the field path and
//     message.
//   - ErrNotInstalled (errors.Is): Enable, Disable, Pin or Remove named a
//     package that is not installed; the message names the package and home.
//   - ErrAlreadyInstalled (errors.Is): Install or InstallSource, without
//     Upgrade, found a package of that name whose files differ.
//   - *SourceError, matching ErrRefusedSource (errors.Is): InstallSource or
//     PreviewInstall refused the source; it names the source, the entry and
//     the SourceRule broken. Nothing was written.
//   - ErrNoPrevious (errors.Is): Rollback found no previous version.
//   - *InUseError, matching ErrInUse (errors.Is): RemoveChecked or
//     DisableChecked refused; it names the package and why (the host
//     requires it, the dependents and their requirements).
//   - *StateError, matching ErrCorruptState (errors.Is): state.json cannot be
//     decoded, breaks its schema, is larger than MaxStateSize or is not a
//     regular file (a directory, device or FIFO, which is never read); it
//     carries the path and, for decoding errors, the line and column. A corrupt state file is never replaced:
//     writers return the same error.
//   - ErrNoRuntime (errors.Is): Package.CommandPath on a declarative package.
//   - ErrCommandOutside (errors.Is): Package.CommandPath found that a
//     relative command resolves, through symbolic links, outside the package
//     directory; the message names both paths.
//   - Anything else is an I/O error, wrapped with %w and the subject.
package pluginpkg
