package pluginpkg

import (
	"fmt"
	"strings"
)

// packagePinPrefix starts a package pin; a pin without it is a legacy
// executable pin (64 hex digits).
const packagePinPrefix = "package:"

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
	files, err := p.FilesDigest()
	if err != nil {
		return "", err
	}
	_, cmd, err := p.CommandDigest()
	if err != nil {
		return "", err
	}
	return packagePinPrefix + files.Sum + ":" + cmd, nil
}

// IsPackagePin reports whether pin is a well-formed package pin rather than
// an executable pin.
func IsPackagePin(pin string) bool {
	_, _, ok := splitPackagePin(pin)
	return ok
}

// splitPackagePin returns the files and command sums of a package pin.
func splitPackagePin(pin string) (files, cmd string, ok bool) {
	rest, ok := strings.CutPrefix(pin, packagePinPrefix)
	if !ok {
		return "", "", false
	}
	files, cmd, ok = strings.Cut(rest, ":")
	return files, cmd, ok && validPin(files) && validPin(cmd)
}

// validPinValue reports whether s is an executable pin or a package pin.
func validPinValue(s string) bool {
	return validPin(s) || IsPackagePin(s)
}

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
	pinFiles, pinCmd, ok := splitPackagePin(p.Pin)
	if !ok {
		return nil, fmt.Errorf("package %q: pin %q is not a package pin", p.Name, p.Pin)
	}
	files, err := p.FilesDigest()
	if err != nil {
		return nil, err
	}
	path, cmd, err := p.CommandDigest()
	if err != nil {
		return nil, err
	}
	c := &PinCheck{Actual: packagePinPrefix + files.Sum + ":" + cmd, Command: path}
	if files.Sum != pinFiles {
		c.Changed = append(c.Changed, "package files")
	}
	switch {
	case cmd == pinCmd:
	case p.CommandIsInterpreter():
		c.Changed = append(c.Changed, "interpreter "+path)
	default:
		c.Changed = append(c.Changed, "executable "+path)
	}
	return c, nil
}
