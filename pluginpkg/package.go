package pluginpkg

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/extkernel/extkernel/capability"
)

// ErrNoRuntime is returned by Package.CommandPath for a declarative package
// (one without a runtime section).
var ErrNoRuntime = errors.New("package has no runtime")

// CommandPath resolves the runtime command to an absolute executable path:
//
//  1. A command containing a slash or starting with "." is joined to Dir
//     (Parse already guarantees it stays inside Dir, lexically). Symbolic
//     links inside the package are followed: a package may ship a link to
//     an interpreter.
//  2. A bare name is looked up on PATH with exec.LookPath.
//
// Either way the file must exist and be executable; failures wrap the
// *exec.Error or fs error. A package without a runtime gives ErrNoRuntime.
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
	return path, nil
}

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

// ExecutableSHA256 returns the lower-case hex sha256 of the file at path, the
// form Pin expects. Use it on the result of Package.CommandPath.
func ExecutableSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
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
