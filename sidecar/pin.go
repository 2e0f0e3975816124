package sidecar

import (
	"os"

	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/internal/process"
)

// verifiedExe is the executable Start runs: for a pinned package, the file
// opened once, hashed and exec'd through the same descriptor where the
// system allows it (see process.ExecPath), so that a file swapped in after the
// check is not the one that runs.
type verifiedExe struct {
	// path is what to exec: the resolved command, or the descriptor's
	// /proc/self/fd path.
	path string
	// f is the open file that was hashed, or nil without a pin.
	f *os.File
	// stamp identifies f's content as of before the hash (see
	// process.Stamp).
	stamp process.Stamp
}

// release closes the descriptor, once the exec happened (or failed).
func (e verifiedExe) release() {
	if e.f != nil {
		e.f.Close()
	}
}

// verify checks the executable at path against the plugin's pin, if it
// has one: a *PinMismatchError when the sha256 (or, for a package pin, the
// package's files or resolved command) differs. Without a pin it
// opens nothing and returns path. With one, the file is opened once
// (read-only, close-on-exec), hashed through that descriptor, and the
// returned exe runs that same file; the caller releases it after the exec.
func (c *Client) verify(path string) (verifiedExe, error) {
	if c.plugin.Pin == "" {
		return verifiedExe{path: path}, nil
	}
	if pkgfiles.IsPackagePin(c.plugin.Pin) {
		// A package pin covers files the interpreter reads by name after
		// the exec: checked here, through the digest cache.
		return verifiedExe{path: path}, verifyPackage(&c.plugin)
	}
	f, err := os.Open(path)
	if err != nil {
		return verifiedExe{}, err
	}
	stamp, err := process.StampOf(f)
	if err != nil {
		f.Close()
		return verifiedExe{}, err
	}
	sum, err := pkgfiles.FileSHA256(f)
	if err != nil {
		f.Close()
		return verifiedExe{}, err
	}
	if sum != c.plugin.Pin {
		f.Close()
		return verifiedExe{}, &PinMismatchError{Plugin: c.plugin.Name, Path: path, Pinned: c.plugin.Pin, Actual: sum}
	}
	return verifiedExe{path: process.ExecPath(f, path), f: f, stamp: stamp}, nil
}

// changed reports whether the hashed file was rewritten in place since
// the hash. Run after the exec, it catches a rewrite in the moment between
// the hash and the exec, which the descriptor does not prevent: it names
// the file, not its content. Only when the file's status changed (any
// write, truncation, change of mode or of links) is it hashed again; from
// the exec on, the kernel refuses to write a running executable (ETXTBSY),
// so the second hash sees what runs, unless the process already exited.
func (e verifiedExe) changed(pin string) bool {
	if e.f == nil {
		return false
	}
	if now, err := process.StampOf(e.f); err == nil && now == e.stamp {
		return false
	}
	sum, err := pkgfiles.FileSHA256(e.f)
	return err != nil || sum != pin
}
