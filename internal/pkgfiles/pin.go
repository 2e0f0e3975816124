package pkgfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// packagePinPrefix starts a package pin; a pin without it is an executable
// pin (64 hex digits).
const packagePinPrefix = "package:"

// A pin takes one of two forms:
//
//   - an executable pin, 64 lower-case hex digits: the sha256 of the runtime
//     executable alone (FileSHA256);
//   - a package pin, "package:<files>:<command>": the FileDigest sum of the
//     package's files and the sha256 of the file its command resolves to
//     (for a bare command such as "python3", the interpreter found on PATH).

// PackagePin returns the package pin of the package as it is now:
// "package:<files>:<command>" (see FilesDigest and CommandDigest).
func (r Ref) PackagePin() (string, error) {
	files, err := r.FilesDigest()
	if err != nil {
		return "", err
	}
	_, cmd, err := r.CommandDigest()
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
	return files, cmd, ok && ValidSHA256(files) && ValidSHA256(cmd)
}

// ValidPin reports whether s is an executable pin or a package pin.
func ValidPin(s string) bool {
	return ValidSHA256(s) || IsPackagePin(s)
}

// ValidSHA256 reports whether s is 64 lower-case hex digits: an executable
// pin.
func ValidSHA256(s string) bool {
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

// CheckPackagePin compares the package as it is now with pin, which must
// satisfy IsPackagePin, reusing cached digests of unchanged files. An error
// means the package could not be digested.
func (r Ref) CheckPackagePin(pin string) (*PinCheck, error) {
	pinFiles, pinCmd, ok := splitPackagePin(pin)
	if !ok {
		return nil, fmt.Errorf("package %q: pin %q is not a package pin", r.Name, pin)
	}
	files, err := r.FilesDigest()
	if err != nil {
		return nil, err
	}
	path, cmd, err := r.CommandDigest()
	if err != nil {
		return nil, err
	}
	return r.comparePin(pinFiles, pinCmd, files.Sum, path, cmd), nil
}

// ComparePackagePin is CheckPackagePin of digests the caller took: files,
// the FileDigest sum of the package's files (such as CopyFiles returns),
// and cmd, the sha256 of its command, resolved at path. pin must satisfy
// IsPackagePin.
func (r Ref) ComparePackagePin(pin, files, path, cmd string) (*PinCheck, error) {
	pinFiles, pinCmd, ok := splitPackagePin(pin)
	if !ok {
		return nil, fmt.Errorf("package %q: pin %q is not a package pin", r.Name, pin)
	}
	return r.comparePin(pinFiles, pinCmd, files, path, cmd), nil
}

// comparePin compares the digests files and cmd (of the command at path)
// with a package pin's, pinFiles and pinCmd.
func (r Ref) comparePin(pinFiles, pinCmd, files, path, cmd string) *PinCheck {
	c := &PinCheck{Actual: packagePinPrefix + files + ":" + cmd, Command: path}
	if files != pinFiles {
		c.Changed = append(c.Changed, "package files")
	}
	switch {
	case cmd == pinCmd:
	case r.CommandIsInterpreter():
		c.Changed = append(c.Changed, "interpreter "+path)
	default:
		c.Changed = append(c.Changed, "executable "+path)
	}
	return c
}

// FileSHA256 returns the lower-case hex sha256 of what the open file f
// holds, read from its start: the form of an executable pin. Hashing an
// open file rather than a path lets a caller run, through the same
// descriptor, exactly the file it hashed. It reads f with ReadAt and
// leaves its offset alone.
func FileSHA256(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, math.MaxInt64)); err != nil {
		return "", fmt.Errorf("hash %s: %w", f.Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CachedFileSHA256 is FileSHA256 through the digest cache FilesDigest
// uses, keyed by f.Name(): when the version of the open file f (its fstat:
// size, modification time and, on Linux, change time and inode) is one the
// cache trusts for that path, f is not read; otherwise it is read from its
// start, at most MaxPackageBytes (a larger file is an error wrapping
// ErrPackageTooLarge), and the sum cached. The version is the descriptor's,
// so a file renamed over the path since the open is not the one it tells
// about.
func CachedFileSHA256(f *os.File) (string, error) {
	sum, err := fileDigests.sumOpen(f)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(sum[:]), nil
}
