package pluginpkg

import "github.com/extkernel/extkernel/internal/pkgfiles"

// Bounds of a package's files (docs/manifest.md, "Package files"). A package
// over either bound cannot be digested: FilesDigest returns an error
// wrapping ErrPackageTooLarge.
const (
	// MaxPackageFiles is the most files (regular files and symbolic links,
	// interpreter caches excluded) a package may hold: 10000.
	MaxPackageFiles = pkgfiles.MaxPackageFiles
	// MaxPackageBytes is the most bytes its regular files may hold in
	// total, 256 MiB; it also bounds the runtime command hashed by
	// CommandDigest.
	MaxPackageBytes = pkgfiles.MaxPackageBytes
)

var (
	// ErrPackageTooLarge is wrapped by the error of FilesDigest when a
	// package holds more than MaxPackageFiles files or MaxPackageBytes
	// bytes, and of CommandDigest when the command is larger than
	// MaxPackageBytes.
	ErrPackageTooLarge = pkgfiles.ErrPackageTooLarge
	// ErrIrregularFile is wrapped by the error of FilesDigest when a
	// package holds a FIFO, socket or device: such a file has no content to
	// digest and reading it could block. The message names the file.
	ErrIrregularFile = pkgfiles.ErrIrregularFile
)

// FileDigest is the digest of a package's own files: every regular file by
// its path relative to the package directory, whether it is executable and
// its content; every symbolic link by its target as written (never
// followed). Directories count only through what they hold. Interpreter
// caches and version-control metadata are skipped: directories named
// __pycache__, .git, .hg or .svn, files ending in .pyc and the directory
// node_modules/.cache (at any depth); a `git status` in a package directory
// is not a change. The manifest is one of the files.
type FileDigest struct {
	// Sum is the lower-case hex sha256 over every entry in path order.
	Sum string
	// Files maps each file's slash-separated path, relative to the package
	// directory, to the first 16 hex digits of its entry's sha256: enough
	// to name what changed between two digests.
	Files map[string]string
}

// files is what the package's digests and pins are computed from: its
// name, directory and runtime command ("" without a runtime).
func (p *Package) files() pkgfiles.Ref {
	r := pkgfiles.Ref{Name: p.Name, Dir: p.Dir}
	if p.Manifest != nil && p.Manifest.Runtime != nil {
		r.Command = p.Manifest.Runtime.Command
	}
	return r
}

// FilesDigest digests the package's files (see FileDigest). A file whose
// size, modification time, change time and inode are those it had when it
// was last hashed by this process is not read again. The error names the
// package and, for a FIFO, socket or device (ErrIrregularFile), the file;
// over MaxPackageFiles files or MaxPackageBytes bytes it wraps
// ErrPackageTooLarge.
func (p *Package) FilesDigest() (*FileDigest, error) {
	d, err := p.files().FilesDigest()
	if err != nil {
		return nil, err
	}
	return (*FileDigest)(d), nil
}

// CommandDigest resolves the runtime command as CommandPath does (a bare
// name is looked up on this process's PATH) and returns the path and the
// lower-case hex sha256 of the file it resolves to, cached as FilesDigest
// caches files. Two lookups that lead to files with the same content give
// the same sum, wherever they are.
func (p *Package) CommandDigest() (path, sum string, err error) {
	if err := p.checkRuntime(); err != nil {
		return "", "", err
	}
	return p.files().CommandDigest()
}

// CommandIsInterpreter reports whether the runtime command is a bare name
// looked up on PATH (such as "python3"), rather than a file of the package.
func (p *Package) CommandIsInterpreter() bool {
	return p.files().CommandIsInterpreter()
}
