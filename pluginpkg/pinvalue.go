package pluginpkg

import (
	"fmt"
	"strings"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// A pin (Package.Pin, Pin) takes one of two forms:
//
//   - an executable pin, 64 lower-case hex digits: the sha256 of the runtime
//     executable alone (ExecutableSHA256), as in earlier versions;
//   - a package pin, "package:<files>:<command>": the FileDigest sum of the
//     package's files and the sha256 of the file its command resolves to
//     (for a bare command such as "python3", the interpreter found on PATH).
//
// Both are verified right before every start.

// PackagePin returns the package pin of the package as it is now:
// "package:<files>:<command>" (see FilesDigest and CommandDigest).
func (p *Package) PackagePin() (string, error) {
	if err := p.checkRuntime(); err != nil {
		return "", err
	}
	return p.files().PackagePin()
}

// IsPackagePin reports whether pin is a well-formed package pin rather than
// an executable pin.
func IsPackagePin(pin string) bool { return pkgfiles.IsPackagePin(pin) }

// PinCheck is what CheckPackagePin found.
type PinCheck struct {
	// Actual is the package pin of the package as it is now.
	Actual string
	// Command is the resolved runtime command (CommandDigest).
	Command string
	// Changed says what differs from the pin, in this order: "package
	// files", then "interpreter <path>" for a bare command or "executable
	// <path>" for one of the package's files. Empty when the package
	// matches its pin.
	Changed []string
}

// CheckPackagePin compares the package as it is now with its package pin
// (p.Pin, which must satisfy IsPackagePin), reusing cached digests of
// unchanged files. An error means the package could not be digested.
func (p *Package) CheckPackagePin() (*PinCheck, error) {
	if !IsPackagePin(p.Pin) {
		return nil, fmt.Errorf("package %q: pin %q is not a package pin", p.Name, p.Pin)
	}
	if err := p.checkRuntime(); err != nil {
		return nil, err
	}
	c, err := p.files().CheckPackagePin(p.Pin)
	if err != nil {
		return nil, err
	}
	return (*PinCheck)(c), nil
}

// validOrigin reports whether o names an artifact by digest: at most 4096
// bytes of printable text ending in "@sha256:" and 64 lower-case hex
// digits (Package.Origin).
func validOrigin(o string) bool {
	at := strings.LastIndex(o, "@sha256:")
	if at <= 0 || len(o) > 4096 || !pkgfiles.ValidSHA256(o[at+len("@sha256:"):]) {
		return false
	}
	for _, r := range o {
		if r < 0x21 || r == 0x7f {
			return false
		}
	}
	return true
}
