package admin

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/extkernel/extkernel/pluginpkg"
)

// maxSocketPath is the longest socket path Listen accepts, in bytes: the
// size of sun_path less its terminating NUL on macOS and the BSDs (Linux
// allows 107).
const maxSocketPath = 103

// probeTimeout bounds the dial that tells a live socket from a stale one.
const probeTimeout = time.Second

// ErrInUse is wrapped by Listen's error when a server answers on the
// socket path already.
var ErrInUse = errors.New("a server answers on it")

// Listener is a listener on an admin socket, from Listen. Close stops
// listening and removes the socket file, if it is still the one Listen
// created.
type Listener struct {
	net.Listener
	// Path is the socket's absolute path.
	Path string
	// Note is non-empty when Listen repaired something before it
	// listened: it made the socket's directory private (see
	// pluginpkg.PrepareRunDir), or removed a stale socket (one nobody
	// answered). A sentence for the operator, e.g. "removed the stale
	// admin socket /h/run/admin.sock: nothing answered it"; both are
	// joined by "; ".
	Note string

	created   fs.FileInfo // the socket file Listen made, to remove only it
	closeOnce sync.Once
	closeErr  error
}

// Listen creates the Unix socket path and listens on it. The socket's
// directory is prepared as a home's run directory is
// (pluginpkg.PrepareRunDir): created with mode 0700 when missing, refused
// when it is a symbolic link or another user's directory that others may
// write (such as /tmp), made 0700 (with a Note) when it is this user's
// and others may write it. The socket is made with mode 0600, so only
// its owner can connect. Where the platform allows
// (unix), the socket is bound under a temporary name and linked into place
// once it listens: a client never finds the path before it answers.
//
// Listen refuses a path that exists and is not a socket, and one that a
// server answers on (an error wrapping ErrInUse). A socket nobody answers
// was left by a process that is gone: Listen removes it and says so in
// Listener.Note.
//
// The caller MUST Close the listener (Server.Close does, for a listener it
// serves).
func Listen(path string) (*Listener, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("admin: listen %s: %w", path, err)
	}
	if len(abs) > maxSocketPath {
		return nil, fmt.Errorf("admin: listen %s: socket path is %d bytes long, at most %d work everywhere", abs, len(abs), maxSocketPath)
	}
	dirNote, err := pluginpkg.PrepareRunDir(filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("admin: listen %s: %w", abs, err)
	}
	note, err := clearStale(abs)
	if err != nil {
		return nil, err
	}
	ln, err := listenUnix(abs)
	if err != nil {
		return nil, fmt.Errorf("admin: listen %s: %w", abs, err)
	}
	l := &Listener{Listener: ln, Path: abs, Note: joinNotes(dirNote, note)}
	l.created, _ = os.Lstat(abs)
	return l, nil
}

// joinNotes joins the non-empty notes with "; ".
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

// clearStale checks what is at path: nothing, or a stale socket it removes
// (returning the note), is fine.
func clearStale(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("admin: listen: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return "", fmt.Errorf("admin: listen %s: the path exists and is not a socket (%s)", path, fi.Mode().Type())
	}
	if c, err := net.DialTimeout("unix", path, probeTimeout); err == nil {
		c.Close()
		return "", fmt.Errorf("admin: listen %s: %w", path, ErrInUse)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("admin: listen: removing the stale socket: %w", err)
	}
	return fmt.Sprintf("removed the stale admin socket %s: nothing answered it", path), nil
}

// Close stops listening and removes the socket file unless another file
// has replaced it. It is idempotent.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.Listener.Close()
		if fi, err := os.Lstat(l.Path); err == nil && l.created != nil && os.SameFile(fi, l.created) {
			if err := os.Remove(l.Path); err != nil && l.closeErr == nil {
				l.closeErr = err
			}
		}
	})
	return l.closeErr
}
