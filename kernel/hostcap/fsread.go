package hostcap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/protocol"
)

// FSRead is the key of the capability NewFSRead serves.
const FSRead capability.Key = "host.fs.read"

// FSReadConfig is what a host.fs.read handler serves. In kernel.json it
// is the object capability_config["host.fs.read"], with the keys of the
// json tags; an unknown key is refused.
type FSReadConfig struct {
	// Roots are the directories whose files may be read: absolute paths
	// of existing directories, at least one. A file is served when its
	// path lies beneath a root (the root as given, or with its symbolic
	// links resolved) and, once every symbolic link beneath the root is
	// resolved, still does: a link leaving the root, or an absolute
	// one, is refused.
	Roots []string `json:"roots"`
	// MaxBytes bounds the size of a file served, in bytes: zero means
	// DefaultMaxBytes, more than MaxMaxBytes is refused. A larger file is
	// refused, not cut.
	MaxBytes int64 `json:"max_bytes"`
}

// UnmarshalJSON decodes the config as kernel.json holds it, refusing
// unknown keys.
func (c *FSReadConfig) UnmarshalJSON(b []byte) error {
	type plain FSReadConfig
	return decodeStrict(b, (*plain)(c))
}

// fsRoot is a root: the path as configured, and with its links resolved.
type fsRoot struct{ given, real string }

// NewFSRead returns the handler of host.fs.read. Its one method, read,
// takes {"path": string}, an absolute path, and answers the file's
// content (package doc, "Answers"), or refuses: a path beneath no root,
// one whose links leave its root, something other than a regular file, a
// file over the size bound. Every call is audited (package doc, "Audit").
// The error lists every problem of cfg, each with its key.
func NewFSRead(cfg FSReadConfig) (capability.Handler, error) {
	var problems []string
	if len(cfg.Roots) == 0 {
		problems = append(problems, "roots: at least one directory is required")
	}
	var roots []fsRoot
	for i, r := range cfg.Roots {
		root, err := checkRoot(r)
		if err != nil {
			problems = append(problems, fmt.Sprintf("roots[%d]: %q: %v", i, r, err))
			continue
		}
		roots = append(roots, root)
	}
	max, msg := maxBytes(cfg.MaxBytes)
	if msg != "" {
		problems = append(problems, msg)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s", FSRead, strings.Join(problems, "; "))
	}
	h := &fsReader{roots: roots, max: max}
	return h.serve, nil
}

// checkRoot checks a configured root and resolves its links.
func checkRoot(r string) (fsRoot, error) {
	if !filepath.IsAbs(r) {
		return fsRoot{}, errors.New("must be an absolute path")
	}
	real, err := filepath.EvalSymlinks(r)
	if err != nil {
		return fsRoot{}, err
	}
	if fi, err := os.Stat(real); err != nil {
		return fsRoot{}, err
	} else if !fi.IsDir() {
		return fsRoot{}, errors.New("must be a directory")
	}
	return fsRoot{given: filepath.Clean(r), real: real}, nil
}

// maxBytes returns the size bound a config's max_bytes makes, or what is
// wrong with it.
func maxBytes(n int64) (int64, string) {
	switch {
	case n == 0:
		return DefaultMaxBytes, ""
	case n < 0 || n > MaxMaxBytes:
		return 0, fmt.Sprintf("max_bytes: %d must be in 1..%d", n, MaxMaxBytes)
	}
	return n, ""
}

// fsReader serves host.fs.read.
type fsReader struct {
	roots []fsRoot
	max   int64
}

// readInput is the input of read.
type readInput struct {
	Path *string `json:"path"`
}

func (h *fsReader) serve(ctx context.Context, call *capability.Call) (json.RawMessage, error) {
	if call.Method != "read" {
		return nil, noMethod(string(FSRead), call.Method, "read")
	}
	var in readInput
	if err := json.Unmarshal(call.Input, &in); err != nil || in.Path == nil {
		return nil, badInput(`%s.read: input must be {"path": string}`, FSRead)
	}
	data, perr := h.read(*in.Path)
	if perr != nil {
		audit(ctx, *in.Path, "", perr)
		return nil, perr
	}
	audit(ctx, *in.Path, fmt.Sprintf("read %d bytes", len(data)), nil)
	return json.Marshal(contentOf(data))
}

// read reads the file at p, or says why not.
func (h *fsReader) read(p string) ([]byte, *protocol.Error) {
	if !filepath.IsAbs(p) {
		return nil, refusal(string(FSRead), reasonDenied, "denied: %q is not an absolute path", p)
	}
	p = filepath.Clean(p)
	root, rel, ok := h.beneath(p)
	if !ok {
		return nil, refusal(string(FSRead), reasonDenied, "denied: %s is not beneath a root the host serves (%s)", p, h.rootList())
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, refusal(string(FSRead), reasonFailed, "%s: the root %s cannot be opened", p, root)
	}
	defer r.Close()
	f, err := r.OpenFile(rel, openFlags, 0)
	if err != nil {
		return nil, openRefusal(p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, refusal(string(FSRead), reasonFailed, "%s: %v", p, errors.Unwrap(err))
	case !fi.Mode().IsRegular():
		return nil, refusal(string(FSRead), reasonFailed, "%s is not a regular file (%s)", p, fi.Mode().Type())
	case fi.Size() > h.max:
		return nil, refusal(string(FSRead), reasonTooLarge, "%s is %d bytes, more than the %d the host serves", p, fi.Size(), h.max)
	}
	data, err := io.ReadAll(io.LimitReader(f, h.max+1))
	switch {
	case err != nil:
		return nil, refusal(string(FSRead), reasonFailed, "%s: %v", p, errors.Unwrap(err))
	case int64(len(data)) > h.max:
		return nil, refusal(string(FSRead), reasonTooLarge, "%s grew past the %d bytes the host serves", p, h.max)
	}
	return data, nil
}

// beneath finds the root p lies beneath, as given or resolved, and p's
// path relative to it.
func (h *fsReader) beneath(p string) (root, rel string, ok bool) {
	for _, r := range h.roots {
		for _, dir := range []string{r.given, r.real} {
			if rel, err := filepath.Rel(dir, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return r.real, rel, true
			}
		}
	}
	return "", "", false
}

// rootList lists the roots as configured.
func (h *fsReader) rootList() string {
	list := make([]string, len(h.roots))
	for i, r := range h.roots {
		list[i] = r.given
	}
	return strings.Join(list, ", ")
}

// openRefusal says why a file beneath a root did not open: a link
// leaving the root is denied, a missing file not found.
func openRefusal(p string, err error) *protocol.Error {
	var pe *fs.PathError
	cause := err
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return refusal(string(FSRead), reasonNotFound, "%s: no such file", p)
	case strings.Contains(cause.Error(), "escapes from parent"):
		return refusal(string(FSRead), reasonDenied, "denied: %s leads outside its root through a symbolic link", p)
	}
	return refusal(string(FSRead), reasonFailed, "%s: %v", p, cause)
}
