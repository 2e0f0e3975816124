// Package pkgfiles reads a plugin package's directory: it resolves the
// runtime command, digests the package's files and command through one
// process-wide cache, checks pins, and copies the files it digests into a
// private directory, digesting the copy as it makes it (CopyFiles: the
// sidecar's package pin runs the plugin from such a copy). Package pluginpkg's public API
// (Package.CommandPath, FilesDigest, CommandDigest, PackagePin,
// CheckPackagePin) and the sidecar's checks at spawn both call it, so the
// module has one implementation of each, and a plan, a reload and a crash
// restart share one cache.
//
// A Ref names what it reads: the package's name (for messages), its
// directory and its runtime command as the manifest writes it. It holds no
// manifest: the caller, which parsed and validated one, passes the data
// down.
//
// # Invariants
//
//   - A relative command resolves inside the package directory, every
//     symbolic link followed, or CommandPath fails with an error matching
//     ErrCommandOutside. A bare name is looked up on PATH.
//   - A file is read again only when its version (size, modification time
//     and, on Linux, change time and inode) differs from the one the cache
//     recorded, or was recorded within RacyWindow of its last change; but
//     CopyFiles reads every file it copies where versions carry no change
//     time, and a file that changed while the system copied it.
//   - Digests depend only on the files' paths, kinds, execute bits and
//     contents, in path order; never on the walk's timing.
//
// # Concurrency
//
// Every function is safe for concurrent use; the cache holds no lock while
// it reads a file.
//
// # Errors
//
// Errors name the package and, where there is one, the file: an error
// matching ErrCommandOutside, ErrPackageTooLarge or ErrIrregularFile, or
// an I/O error wrapped with %w.
package pkgfiles
