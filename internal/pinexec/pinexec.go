// Package pinexec checks a plugin package against its pin right before
// its process is started, and hands the start what to run: the file to
// exec and the directory to run in.
//
//   - An executable pin: the very file that was hashed, opened once and
//     exec'd through its descriptor where the system allows it
//     (process.ExecPath), so that a file swapped in after the check is not
//     the one that runs. The plugin runs in its package directory.
//   - A package pin: the package's files are copied into a fresh private
//     directory and digested as they are copied (pkgfiles.Ref.CopyFiles),
//     and the plugin runs in that copy, which only the host's user can
//     write: a file of the package swapped or rewritten after the check,
//     a script and every module it imports alike, is not what runs. The
//     command the pin covers (the interpreter found on PATH, or the
//     package's own executable) is opened once where it resolved, hashed
//     and exec'd through that descriptor, as for an executable pin: it and
//     the copy both match the pin, so a package's executable holds what
//     its copy holds. Where it cannot be (a "#!" script, no /proc), a
//     package's own command is exec'd from the copy by path, and an
//     interpreter by its path on PATH.
//   - No pin: nothing is opened or copied; the plugin runs its command by
//     path in its package directory.
//
// It is its own package so that internal/pkgfiles, which package
// pluginpkg (and through it package generation) imports, stays free of
// process mechanics.
//
// # Lifecycle
//
// Verify returns a Verified. Its caller:
//
//  1. execs Verified.Path in Verified.Dir, then MUST call Release (the
//     exec done, or failed);
//  2. after a successful exec, calls Changed and discards the process when
//     it reports true;
//  3. MUST call Copy.Remove, when Copy is not nil, once nothing runs from
//     the copy any more: the plugin's process group is gone, or the exec
//     failed. Nothing else removes it (a host killed with SIGKILL leaves it
//     in the temporary directory).
package pinexec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/internal/process"
)

// Verified is what a plugin's start runs: for a pinned package, the file
// opened once, hashed and exec'd through the same descriptor where the
// system allows it (see process.ExecPath), so that a file swapped in after
// the check is not the one that runs.
type Verified struct {
	// Path is what to exec: the resolved command, the descriptor's
	// /proc/self/fd path, or the command in the verified copy.
	Path string
	// Dir is where the plugin runs, and what it is told is its package
	// directory (EXTKERNEL_PLUGIN_DIR): the package directory, or for a
	// package pin the verified copy.
	Dir string
	// Copy is the verified copy of the package that Dir names, for a
	// package pin, or nil. The caller owns it (see Lifecycle).
	Copy *Copy
	// f is the open file that was hashed, or nil without a pin.
	f *os.File
	// stamp identifies f's content as of before the hash (see
	// process.StampOf); sum is the sha256 the hash found.
	stamp process.Stamp
	sum   string
}

// Release closes the descriptor, once the exec happened (or failed). It
// leaves the copy alone.
func (v Verified) Release() {
	if v.f != nil {
		v.f.Close()
	}
}

// Verify checks package r's resolved command at path against pin, if it
// is not empty, and returns what to run; the package documentation says
// what each form of pin does. A *PinMismatchError reports that the
// executable's sha256 (or, for a package pin, the package's files or
// command) differs from the pin. On any error nothing is left open or
// copied. Without a pin it opens nothing and returns path and r.Dir.
func Verify(r pkgfiles.Ref, pin, path string) (Verified, error) {
	switch {
	case pin == "":
		return Verified{Path: path, Dir: r.Dir}, nil
	case pkgfiles.IsPackagePin(pin):
		return verifyPackage(r, pin, path)
	}
	v, err := open(path, path, pkgfiles.FileSHA256)
	if err != nil {
		return Verified{}, err
	}
	if v.sum != pin {
		v.Release()
		return Verified{}, &PinMismatchError{Plugin: r.Name, Path: path, Pinned: pin, Actual: v.sum}
	}
	v.Dir = r.Dir
	return v, nil
}

// verifyPackage copies r's files into a new private directory, digesting
// them as it copies, opens and hashes the command at path (the interpreter
// found on PATH, or one of the package's files), and compares both with
// the package pin. A command of the package is exec'd through the
// descriptor that was hashed, which holds what the copy holds once both
// match the pin; where it cannot be (a "#!" script, no /proc), the copy's
// is exec'd by path, as nobody but the host's user can write it.
func verifyPackage(r pkgfiles.Ref, pin, path string) (v Verified, err error) {
	cp, err := newCopy(r.Name)
	if err != nil {
		return Verified{}, err
	}
	defer func() {
		if err != nil {
			v.Release()
			v = Verified{}
			if rerr := cp.Remove(); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}()
	files, err := r.CopyFiles(cp.Dir)
	if err != nil {
		return v, err
	}
	byPath := path
	if !r.CommandIsInterpreter() {
		inCopy := r
		inCopy.Dir = cp.Dir
		if byPath, err = inCopy.CommandLocation(); err != nil {
			return v, err
		}
	}
	// Through the cache: an unchanged command (node is 100 MB; the copy
	// just read a package's own) is not read again.
	if v, err = open(path, byPath, pkgfiles.CachedFileSHA256); err != nil {
		return v, err
	}
	c, err := r.ComparePackagePin(pin, files.Sum, path, v.sum)
	if err == nil && len(c.Changed) > 0 {
		err = &PinMismatchError{Plugin: r.Name, Path: path, Pinned: pin, Actual: c.Actual, Changed: strings.Join(c.Changed, " and ")}
	}
	if err != nil {
		return v, err
	}
	v.Dir, v.Copy = cp.Dir, cp
	return v, nil
}

// open opens the file at path once (read-only, close-on-exec), stamps it
// and hashes it through that descriptor with hash. The Verified runs that
// same file where the system allows it, else byPath (see
// process.ExecPath); the caller compares its sum with the pin.
func open(path, byPath string, hash func(*os.File) (string, error)) (Verified, error) {
	f, err := os.Open(path)
	if err != nil {
		return Verified{}, err
	}
	stamp, err := process.StampOf(f)
	if err != nil {
		f.Close()
		return Verified{}, err
	}
	sum, err := hash(f)
	if err != nil {
		f.Close()
		return Verified{}, err
	}
	return Verified{Path: process.ExecPath(f, byPath), f: f, stamp: stamp, sum: sum}, nil
}

// Changed reports whether the hashed file was rewritten in place since
// the hash. Run after the exec, it catches a rewrite in the moment between
// the hash and the exec, which the descriptor does not prevent: it names
// the file, not its content. Only when the file's status changed (any
// write, truncation, change of mode or of links) is it hashed again; from
// the exec on, the kernel refuses to write a running executable (ETXTBSY),
// so the second hash sees what runs, unless the process already exited.
func (v Verified) Changed() bool {
	if v.f == nil {
		return false
	}
	if now, err := process.StampOf(v.f); err == nil && now == v.stamp {
		return false
	}
	sum, err := pkgfiles.FileSHA256(v.f)
	return err != nil || sum != v.sum
}

// Copy is a private copy of a package's files, made and verified by Verify
// for a package pin: a directory of the system's temporary directory
// (os.TempDir: $TMPDIR, else /tmp), named extkernel-<package>-<random>,
// mode 0700, its files read-only.
type Copy struct {
	// Dir is the copy's absolute path.
	Dir string
}

// newCopy makes the empty directory of a copy of package name's files.
func newCopy(name string) (*Copy, error) {
	dir, err := os.MkdirTemp("", "extkernel-"+name+"-")
	if err == nil && !filepath.IsAbs(dir) {
		os.Remove(dir)
		err = fmt.Errorf("%s is not an absolute path (set TMPDIR to one)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("package %q: copy: %w", name, err)
	}
	return &Copy{Dir: dir}, nil
}

// Remove removes the copy, even where the plugin took the write
// permission off one of its directories. It does nothing on a nil *Copy.
func (c *Copy) Remove() error {
	if c == nil || os.RemoveAll(c.Dir) == nil {
		return nil
	}
	filepath.WalkDir(c.Dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(path, 0o700) // before WalkDir reads it
		}
		return nil
	})
	if err := os.RemoveAll(c.Dir); err != nil {
		return fmt.Errorf("verified copy: remove: %w", err)
	}
	return nil
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
