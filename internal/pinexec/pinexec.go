// Package pinexec checks a plugin package against its pin right before
// its process is started, and hands the start the file to exec: for an
// executable pin, the very file that was hashed, opened once and exec'd
// through its descriptor where the system allows it (process.ExecPath),
// so that a file swapped in after the check is not the one that runs. A
// package pin is checked through internal/pkgfiles' digest cache.
//
// It is its own package so that internal/pkgfiles, which package
// pluginpkg (and through it package generation) imports, stays free of
// process mechanics.
package pinexec

import (
	"fmt"
	"os"
	"strings"

	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/internal/process"
)

// Verified is the executable a plugin's start runs: for a pinned package,
// the file opened once, hashed and exec'd through the same descriptor
// where the system allows it (see process.ExecPath), so that a file
// swapped in after the check is not the one that runs.
type Verified struct {
	// Path is what to exec: the resolved command, or the descriptor's
	// /proc/self/fd path.
	Path string
	// f is the open file that was hashed, or nil without an executable
	// pin.
	f *os.File
	// stamp identifies f's content as of before the hash (see
	// process.StampOf).
	stamp process.Stamp
}

// Release closes the descriptor, once the exec happened (or failed).
func (v Verified) Release() {
	if v.f != nil {
		v.f.Close()
	}
}

// Verify checks package r's resolved command at path against pin, if it
// is not empty: a *PinMismatchError when the executable's sha256 (or, for a
// package pin, the package's files or resolved command) differs. Without a
// pin it opens nothing and returns path. With an executable pin, the file
// is opened once (read-only, close-on-exec), hashed through that
// descriptor, and the Verified runs that same file; the caller releases it
// after the exec. A package pin covers files the interpreter reads by name
// after the exec: they are checked here, through the digest cache.
func Verify(r pkgfiles.Ref, pin, path string) (Verified, error) {
	if pin == "" {
		return Verified{Path: path}, nil
	}
	if pkgfiles.IsPackagePin(pin) {
		c, err := r.CheckPackagePin(pin)
		if err == nil && len(c.Changed) > 0 {
			err = &PinMismatchError{Plugin: r.Name, Path: c.Command, Pinned: pin, Actual: c.Actual, Changed: strings.Join(c.Changed, " and ")}
		}
		return Verified{Path: path}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Verified{}, err
	}
	stamp, err := process.StampOf(f)
	if err != nil {
		f.Close()
		return Verified{}, err
	}
	sum, err := pkgfiles.FileSHA256(f)
	if err != nil {
		f.Close()
		return Verified{}, err
	}
	if sum != pin {
		f.Close()
		return Verified{}, &PinMismatchError{Plugin: r.Name, Path: path, Pinned: pin, Actual: sum}
	}
	return Verified{Path: process.ExecPath(f, path), f: f, stamp: stamp}, nil
}

// Changed reports whether the hashed file was rewritten in place since
// the hash. Run after the exec, it catches a rewrite in the moment between
// the hash and the exec, which the descriptor does not prevent: it names
// the file, not its content. Only when the file's status changed (any
// write, truncation, change of mode or of links) is it hashed again; from
// the exec on, the kernel refuses to write a running executable (ETXTBSY),
// so the second hash sees what runs, unless the process already exited.
func (v Verified) Changed(pin string) bool {
	if v.f == nil {
		return false
	}
	if now, err := process.StampOf(v.f); err == nil && now == v.stamp {
		return false
	}
	sum, err := pkgfiles.FileSHA256(v.f)
	return err != nil || sum != pin
}

// PinMismatchError reports that a pinned package is not what was pinned:
// its start was refused.
type PinMismatchError struct {
	Plugin string
	// Path is the resolved executable.
	Path string
	// Pinned is the package's pin, Actual the same digest of the package
	// as it is now: for an executable pin the executable's sha256 in
	// lower-case hex, for a package pin the package pin it would need.
	Pinned, Actual string
	// Changed says what differs from a package pin: "package files",
	// "interpreter /usr/bin/python3", or both joined by " and "; empty for
	// an executable pin.
	Changed string
}

// Error returns `plugin "x": executable /abs/bin/x has sha256 <actual>, but
// the package is pinned to <pinned>; re-pin it if the change is intended`,
// or for a package pin `plugin "x": package files and interpreter
// /usr/bin/python3 changed since the package was pinned (pinned <pinned>,
// now <actual>); re-pin it if the change is intended`.
func (e *PinMismatchError) Error() string {
	return fmt.Sprintf("plugin %q: %s", e.Plugin, e.Detail())
}

// Detail is Error without the plugin's name, for a message that names it
// already.
func (e *PinMismatchError) Detail() string {
	if e.Changed != "" {
		return fmt.Sprintf("%s changed since the package was pinned (pinned %s, now %s); re-pin it if the change is intended",
			e.Changed, e.Pinned, e.Actual)
	}
	return fmt.Sprintf("executable %s has sha256 %s, but the package is pinned to %s; re-pin it if the change is intended", e.Path, e.Actual, e.Pinned)
}
