package pluginpkg

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/internal/homefile"
)

// ErrNoRuntime is returned by Package.CommandPath for a declarative package
// (one without a runtime section).
var ErrNoRuntime = errors.New("package has no runtime")

// ErrCommandOutside is matched (errors.Is) by the error CommandPath returns
// when a relative command, once every symbolic link is resolved, is not
// inside the package directory. The message names both paths.
var ErrCommandOutside = errors.New("command resolves outside the package directory")

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
	if p.Manifest == nil || p.Manifest.Runtime == nil {
		return "", fmt.Errorf("package %q: %w", p.Name, ErrNoRuntime)
	}
	cmd := p.Manifest.Runtime.Command
	if msg := checkCommand(cmd); msg != "" {
		return "", fmt.Errorf("package %q: runtime.command: %s", p.Name, msg)
	}
	target := cmd
	if isRelativeCommand(cmd) {
		target = filepath.Join(p.Dir, filepath.Clean(cmd))
	}
	path, err := exec.LookPath(target)
	if err != nil {
		return "", fmt.Errorf("package %q: command %q: %w", p.Name, cmd, err)
	}
	if !filepath.IsAbs(path) {
		if path, err = filepath.Abs(path); err != nil {
			return "", fmt.Errorf("package %q: command %q: %w", p.Name, cmd, err)
		}
	}
	if isRelativeCommand(cmd) {
		if err := p.checkInside(cmd, path); err != nil {
			return "", err
		}
	}
	return path, nil
}

// checkInside returns an error matching ErrCommandOutside unless path, with
// every symbolic link resolved, lies inside the resolved package directory.
func (p *Package) checkInside(cmd, path string) error {
	if noLinks(p.Dir, cmd) {
		return nil
	}
	dir, err := filepath.EvalSymlinks(p.Dir)
	if err != nil {
		return fmt.Errorf("package %q: %w", p.Name, err)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("package %q: command %q: %w", p.Name, cmd, err)
	}
	if rel, err := filepath.Rel(dir, target); err == nil && rel != "." && rel != ".." &&
		!strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	return &commandOutsideError{plugin: p.Name, cmd: cmd, target: target, dir: dir}
}

// noLinks reports whether no component of the relative command cmd is a
// symbolic link under dir, with one lstat per component of cmd rather than
// per component of the whole path. Parse keeps cmd lexically inside the
// package, so dir/cmd then resolves inside whatever dir resolves to. Any
// link, ".." or failure says false, and the full check decides.
func noLinks(dir, cmd string) bool {
	path := dir
	for _, part := range strings.Split(filepath.Clean(cmd), string(filepath.Separator)) {
		if part == ".." {
			return false
		}
		if part == "." || part == "" {
			continue
		}
		path = filepath.Join(path, part)
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return false
		}
	}
	return true
}

// commandOutsideError is the error of a command that resolves outside its
// package directory.
type commandOutsideError struct{ plugin, cmd, target, dir string }

func (e *commandOutsideError) Error() string {
	return fmt.Sprintf("package %q: command %q resolves to %s, outside the package directory %s", e.plugin, e.cmd, e.target, e.dir)
}

func (e *commandOutsideError) Is(target error) bool { return target == ErrCommandOutside }

// CommandLocation returns where the runtime command is: Dir joined with a
// relative command (no system call, and no check that the file exists or is
// executable: CommandPath does that), or the PATH lookup of a bare name.
func (p *Package) CommandLocation() (string, error) {
	if p.Manifest == nil || p.Manifest.Runtime == nil {
		return "", fmt.Errorf("package %q: %w", p.Name, ErrNoRuntime)
	}
	if cmd := p.Manifest.Runtime.Command; isRelativeCommand(cmd) {
		return filepath.Join(p.Dir, filepath.Clean(cmd)), nil
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
func FileSHA256(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, math.MaxInt64)); err != nil {
		return "", fmt.Errorf("hash %s: %w", f.Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sha256Hex returns the lower-case hex sha256 of data.
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// validPin reports whether s is 64 lower-case hex digits.
func validPin(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
