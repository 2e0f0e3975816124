package pkgfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Ref names a package's files: what this package needs to resolve its
// command and digest it.
type Ref struct {
	// Name is the package name, for messages.
	Name string
	// Dir is the absolute package directory.
	Dir string
	// Command is the runtime command as the manifest writes it, already
	// validated (pluginpkg's runtime.command rules); empty for a package
	// without runtime, which has files to digest but no command.
	Command string
}

// ErrCommandOutside is matched (errors.Is) by the error CommandPath returns
// when a relative command, once every symbolic link is resolved, is not
// inside the package directory. The message names both paths.
var ErrCommandOutside = errors.New("command resolves outside the package directory")

// IsRelativeCommand reports whether cmd is resolved relative to the package
// directory (it contains a slash or starts with a dot) rather than on PATH.
func IsRelativeCommand(cmd string) bool {
	return strings.Contains(cmd, "/") || strings.HasPrefix(cmd, ".")
}

// CommandIsInterpreter reports whether the command is a bare name looked
// up on PATH (such as "python3"), rather than a file of the package.
func (r Ref) CommandIsInterpreter() bool {
	return r.Command != "" && !IsRelativeCommand(r.Command)
}

// CommandPath resolves the command to an absolute executable path: a
// relative command is joined to Dir and, with every symbolic link
// resolved, MUST lie inside the resolved package directory (otherwise the
// error matches ErrCommandOutside); a bare name is looked up on PATH with
// exec.LookPath, wherever it leads. Either way the file must exist and be
// executable; other failures wrap the *exec.Error or fs error. The path
// returned is Dir joined with the command, not the link's target.
func (r Ref) CommandPath() (string, error) {
	cmd := r.Command
	target := cmd
	if IsRelativeCommand(cmd) {
		target = filepath.Join(r.Dir, filepath.Clean(cmd))
	}
	path, err := exec.LookPath(target)
	if err != nil {
		return "", fmt.Errorf("package %q: command %q: %w", r.Name, cmd, err)
	}
	if !filepath.IsAbs(path) {
		if path, err = filepath.Abs(path); err != nil {
			return "", fmt.Errorf("package %q: command %q: %w", r.Name, cmd, err)
		}
	}
	if IsRelativeCommand(cmd) {
		if err := r.checkInside(cmd, path); err != nil {
			return "", err
		}
	}
	return path, nil
}

// CommandLocation returns where the command is: Dir joined with a relative
// command (no system call, and no check that the file exists or is
// executable: CommandPath does that), or the PATH lookup of a bare name.
func (r Ref) CommandLocation() (string, error) {
	if IsRelativeCommand(r.Command) {
		return filepath.Join(r.Dir, filepath.Clean(r.Command)), nil
	}
	return r.CommandPath()
}

// checkInside returns an error matching ErrCommandOutside unless path, with
// every symbolic link resolved, lies inside the resolved package directory.
func (r Ref) checkInside(cmd, path string) error {
	if noLinks(r.Dir, cmd) {
		return nil
	}
	dir, err := filepath.EvalSymlinks(r.Dir)
	if err != nil {
		return fmt.Errorf("package %q: %w", r.Name, err)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("package %q: command %q: %w", r.Name, cmd, err)
	}
	if rel, err := filepath.Rel(dir, target); err == nil && rel != "." && rel != ".." &&
		!strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	return &commandOutsideError{plugin: r.Name, cmd: cmd, target: target, dir: dir}
}

// plainCommand is CommandPath's answer for its common case, a relative
// command naming an executable regular file of the package reached through
// no symbolic link, in one lstat per component of the command and one
// access check (where CommandPath stats, lstats and stats again): the
// path, as CommandPath returns it, and the file's lstat. ok is false in
// every other case, where CommandPath decides and words the error.
func (r Ref) plainCommand() (path string, fi os.FileInfo, ok bool) {
	if !IsRelativeCommand(r.Command) || !filepath.IsAbs(r.Dir) {
		return "", nil, false
	}
	path, fi, ok = linkFree(r.Dir, r.Command)
	if !ok || fi == nil || !fi.Mode().IsRegular() || !executable(path, fi) {
		return "", nil, false
	}
	return path, fi, true
}

// noLinks reports whether no component of the relative command cmd is a
// symbolic link under dir, with one lstat per component of cmd rather than
// per component of the whole path. A validated cmd stays lexically inside
// the package, so dir/cmd then resolves inside whatever dir resolves to.
// Any link, ".." or failure says false, and the full check decides.
func noLinks(dir, cmd string) bool {
	_, _, ok := linkFree(dir, cmd)
	return ok
}

// linkFree is noLinks, with dir joined with cmd's components and the
// lstat of the last one (nil when cmd names no component, such as ".").
func linkFree(dir, cmd string) (path string, fi os.FileInfo, ok bool) {
	path = dir
	for _, part := range strings.Split(filepath.Clean(cmd), string(filepath.Separator)) {
		if part == ".." {
			return "", nil, false
		}
		if part == "." || part == "" {
			continue
		}
		path = filepath.Join(path, part)
		var err error
		if fi, err = os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return "", nil, false
		}
	}
	return path, fi, true
}

// commandOutsideError is the error of a command that resolves outside its
// package directory.
type commandOutsideError struct{ plugin, cmd, target, dir string }

func (e *commandOutsideError) Error() string {
	return fmt.Sprintf("package %q: command %q resolves to %s, outside the package directory %s", e.plugin, e.cmd, e.target, e.dir)
}

func (e *commandOutsideError) Is(target error) bool { return target == ErrCommandOutside }
