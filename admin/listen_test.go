//go:build unix

package admin_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/admin"
)

// TestListen covers what Listen finds at the path and in its directory,
// and the modes it sets.
func TestListen(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string) (cleanup func())
		// wantErr and wantNote name the socket <path> and its <dir>.
		wantErr  string
		wantNote string
	}{
		{name: "fresh", prepare: func(*testing.T, string) func() { return func() {} }},
		{name: "not-a-socket", wantErr: "exists and is not a socket", prepare: func(t *testing.T, path string) func() {
			os.MkdirAll(filepath.Dir(path), 0o700)
			writeFile(t, path, "x")
			return func() {}
		}},
		{name: "stale", wantNote: "removed the stale admin socket <path>: nothing answered it", prepare: func(t *testing.T, path string) func() {
			os.MkdirAll(filepath.Dir(path), 0o700)
			ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			ln.SetUnlinkOnClose(false)
			ln.Close() // the file stays, nobody answers: what a killed process leaves
			return func() {}
		}},
		{name: "in-use", wantErr: "a server answers on it", prepare: func(t *testing.T, path string) func() {
			ln, err := admin.Listen(path)
			if err != nil {
				t.Fatal(err)
			}
			return func() { ln.Close() }
		}},
		{name: "dir-writable-by-others", wantNote: "run directory <dir> was writable by its group or others (mode 0777): made it 0700",
			prepare: func(t *testing.T, path string) func() {
				os.Mkdir(filepath.Dir(path), 0o700)
				if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
					t.Fatal(err)
				}
				return func() {}
			}},
		{name: "dir-of-another-user", wantErr: "admin: listen <path>: run directory <dir> is writable by its group or others (mode 0777) and owned by uid 65534",
			prepare: func(t *testing.T, path string) func() {
				if os.Getuid() != 0 {
					t.Skip("needs root to give a directory to another user")
				}
				os.Mkdir(filepath.Dir(path), 0o700)
				if err := os.Chmod(filepath.Dir(path), 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(filepath.Dir(path), 65534, 65534); err != nil {
					t.Fatal(err)
				}
				return func() {}
			}},
		{name: "dir-link", wantErr: "admin: listen <path>: run directory <dir> is a symbolic link (to ",
			prepare: func(t *testing.T, path string) func() {
				elsewhere := t.TempDir()
				if err := os.Symlink(elsewhere, filepath.Dir(path)); err != nil {
					t.Fatal(err)
				}
				return func() {
					if entries, err := os.ReadDir(elsewhere); err != nil || len(entries) != 0 {
						t.Errorf("the link's target holds %v (%v), want nothing", entries, err)
					}
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := socketPath(t)
			subst := strings.NewReplacer("<path>", path, "<dir>", filepath.Dir(path)).Replace
			defer tt.prepare(t, path)()
			ln, err := admin.Listen(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), subst(tt.wantErr)) {
					t.Fatalf("Listen error = %v, want one containing %q", err, subst(tt.wantErr))
				}
				if tt.name == "in-use" && !errors.Is(err, admin.ErrInUse) {
					t.Errorf("error %v does not wrap ErrInUse", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ln.Note != subst(tt.wantNote) {
				t.Errorf("Note = %q, want %q", ln.Note, subst(tt.wantNote))
			}
			checkMode(t, path, os.ModeSocket|0o600)
			checkMode(t, filepath.Dir(path), os.ModeDir|0o700)
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Errorf("the socket's directory holds %d entries, want only the socket", len(entries))
			}
			if c, err := net.Dial("unix", path); err != nil {
				t.Errorf("dial: %v", err)
			} else {
				c.Close()
			}
			if err := ln.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := ln.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the socket is still there after Close: %v", err)
			}
		})
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (os.ModeType | os.ModePerm); got != want {
		t.Errorf("%s: mode %v, want %v", path, got, want)
	}
}

// TestDialNoServer: Dial says whether there is no socket or a stale one.
func TestDialNoServer(t *testing.T) {
	path := socketPath(t)
	_, err := admin.Dial(path)
	var nse *admin.NoServerError
	if !errors.As(err, &nse) || nse.Stale {
		t.Fatalf("Dial with no socket: %v, want a NoServerError that is not stale", err)
	}
	if want := "no admin socket at " + path; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	_, err = admin.Dial(path)
	if !errors.As(err, &nse) || !nse.Stale {
		t.Fatalf("Dial with a stale socket: %v, want a stale NoServerError", err)
	}
}
