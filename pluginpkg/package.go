package pluginpkg

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// ErrNoRuntime is returned by Package.CommandPath for a declarative package
// (one without a runtime section).
var ErrNoRuntime = errors.New("package has no runtime")

// ErrCommandOutside is matched (errors.Is) by the error CommandPath returns
// when a relative command, once every symbolic link is resolved, is not
// inside the package directory. The message names both paths.
var ErrCommandOutside = pkgfiles.ErrCommandOutside

// CommandPath resolves the runtime command to an absolute executable path:
//
//  1. A command containing a slash or starting with "." is joined to Dir
//     (Parse already guarantees it stays inside Dir, lexically). Symbolic
//     links may be used inside the package, but the fully resolved target
//     (filepath.EvalSymlinks) MUST lie inside the resolved package
//     directory; otherwise the error matches ErrCommandOutside. A link to
//     an interpreter elsewhere is refused: a package that needs one names
//     it bare (such as "python3") and puts its script in runtime.args.
//  2. A bare name is looked up on PATH with exec.LookPath, wherever it
//     leads.
//
// Either way the file must exist and be executable; other failures wrap
// the *exec.Error or fs error. The path returned is Dir joined with the
// command, not the link's target. A package without a runtime gives
// ErrNoRuntime.
func (p *Package) CommandPath() (string, error) {
	if err := p.checkRuntime(); err != nil {
		return "", err
	}
	return p.files().CommandPath()
}

// checkRuntime returns the error of a package whose runtime command cannot
// be resolved: it has no runtime (ErrNoRuntime), or its command breaks the
// manifest's rules (a Package built by hand rather than loaded).
func (p *Package) checkRuntime() error {
	if p.Manifest == nil || p.Manifest.Runtime == nil {
		return fmt.Errorf("package %q: %w", p.Name, ErrNoRuntime)
	}
	if msg := p.Manifest.Runtime.NoPlatform(); msg != "" {
		return fmt.Errorf("package %q: %s", p.Name, msg)
	}
	if msg := checkCommand(p.Manifest.Runtime.Command); msg != "" {
		return fmt.Errorf("package %q: runtime.command: %s", p.Name, msg)
	}
	return nil
}

// CommandLocation returns where the runtime command is: Dir joined with a
// relative command (no system call, and no check that the file exists or is
// executable: CommandPath does that), or the PATH lookup of a bare name.
func (p *Package) CommandLocation() (string, error) {
	if p.Manifest == nil || p.Manifest.Runtime == nil {
		return "", fmt.Errorf("package %q: %w", p.Name, ErrNoRuntime)
	}
	if pkgfiles.IsRelativeCommand(p.Manifest.Runtime.Command) {
		return p.files().CommandLocation()
	}
	return p.CommandPath()
}

// Capability converts the package into the resolver's input. Slices are
// copied; versions and constraints are shared (they are immutable).
func (p *Package) Capability() capability.Package {
	cp := capability.Package{Name: p.Name, Enabled: p.Enabled}
	if m := p.Manifest; m != nil {
		cp.Version = m.Version
		cp.Provides = slices.Clone(m.Provides)
		cp.Requires = slices.Clone(m.Requires)
	}
	return cp
}

// CapabilityRequest is the resolver's input for this installed set: every
// package, enabled or not (Package.Capability), the capabilities the host
// provides, and the roots that must run (none: every enabled package).
func (in *Installed) CapabilityRequest(host []capability.Provided, roots []string) capability.Request {
	req := capability.Request{Host: host, Roots: roots, Packages: make([]capability.Package, len(in.Packages))}
	for i, p := range in.Packages {
		req.Packages[i] = p.Capability()
	}
	return req
}

// ExecutableSHA256 returns the lower-case hex sha256 of the file at path, the
// form Pin expects. Use it on the result of Package.CommandPath. A path that
// is not a regular file (after following symbolic links: a device such as
// /dev/zero, a FIFO, a directory) is refused without being read.
func ExecutableSHA256(path string) (string, error) {
	f, _, err := homefile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return FileSHA256(f)
}

// FileSHA256 returns the lower-case hex sha256 of what the open file f
// holds, read from its start, in the form Pin expects. Hashing an open file
// rather than a path lets a caller run, through the same descriptor,
// exactly the file it hashed. It reads f with ReadAt and leaves its offset
// alone.
func FileSHA256(f *os.File) (string, error) { return pkgfiles.FileSHA256(f) }

// sha256Hex returns the lower-case hex sha256 of data.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
