//go:build unix

package pluginpkg

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockRunDir takes the run lock of a home whose run directory is
// missing, private, too open (writable by its group or others: repaired
// to 0700 with a note when this user owns it, refused when another does),
// a symbolic link or a file (refused, the link's target untouched).
func TestLockRunDir(t *testing.T) {
	uid := os.Getuid()
	tests := []struct {
		name string
		// prepare makes run in the home; elsewhere is a directory outside it.
		prepare  func(t *testing.T, run, elsewhere string)
		wantMode os.FileMode // of run afterwards, when it is a directory
		wantNote string      // <run> stands for the run directory
		wantErr  string
	}{
		{name: "missing", prepare: func(*testing.T, string, string) {}, wantMode: 0o700},
		{name: "private", prepare: mkdirMode(0o700), wantMode: 0o700},
		{name: "readable", prepare: mkdirMode(0o755), wantMode: 0o755},
		{name: "world-writable", prepare: mkdirMode(0o777), wantMode: 0o700,
			wantNote: "run directory <run> was writable by its group or others (mode 0777): made it 0700"},
		{name: "sticky-world-writable", prepare: mkdirMode(0o777 | os.ModeSticky), wantMode: 0o700,
			wantNote: "run directory <run> was writable by its group or others (mode 0777): made it 0700"},
		{name: "group-writable", prepare: mkdirMode(0o770), wantMode: 0o700,
			wantNote: "run directory <run> was writable by its group or others (mode 0770): made it 0700"},
		{name: "others-own", prepare: func(t *testing.T, run, _ string) {
			if uid != 0 {
				t.Skip("needs root to give a directory to another user")
			}
			mkdirMode(0o777)(t, run, "")
			if err := os.Chown(run, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, wantMode: 0o777,
			wantErr: fmt.Sprintf("run directory <run> is writable by its group or others (mode 0777) and owned by uid 65534, not this user (uid %d): refusing to use it", uid)},
		{name: "link", prepare: func(t *testing.T, run, elsewhere string) {
			if err := os.Symlink(elsewhere, run); err != nil {
				t.Fatal(err)
			}
		}, wantErr: `run directory <run> is a symbolic link (to "<elsewhere>"): refusing to use it`},
		{name: "file", prepare: func(t *testing.T, run, _ string) {
			if err := os.WriteFile(run, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, wantErr: "run directory <run> is not a directory (a regular file): refusing to use it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, elsewhere := t.TempDir(), t.TempDir()
			if err := os.Chmod(elsewhere, 0o777); err != nil {
				t.Fatal(err)
			}
			run := filepath.Join(home, RunDir)
			tt.prepare(t, run, elsewhere)
			targetBefore := snapshotTree(t, elsewhere)
			subst := strings.NewReplacer("<run>", run, "<elsewhere>", elsewhere).Replace
			l, err := LockRun(home)
			if tt.wantErr != "" {
				if err == nil {
					l.Unlock()
				}
				if want := "lock run: " + subst(tt.wantErr); err == nil || err.Error() != want {
					t.Errorf("LockRun error = %v\nwant %s", err, want)
				}
			} else {
				if err != nil {
					t.Fatalf("LockRun: %v", err)
				}
				defer l.Unlock()
				if l.Note() != subst(tt.wantNote) {
					t.Errorf("Note = %q, want %q", l.Note(), subst(tt.wantNote))
				}
			}
			if tt.wantMode != 0 {
				if fi, err := os.Lstat(run); err != nil || fi.Mode() != os.ModeDir|tt.wantMode {
					t.Errorf("run directory: %v (%v), want mode %v", fi.Mode(), err, os.ModeDir|tt.wantMode)
				}
			}
			assertUnchanged(t, elsewhere, targetBefore)
		})
	}
}

// mkdirMode makes the run directory with mode (umask aside).
func mkdirMode(mode os.FileMode) func(t *testing.T, run, elsewhere string) {
	return func(t *testing.T, run, _ string) {
		if err := os.Mkdir(run, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(run, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPrepareRunDirReplaced: a run directory replaced by a symbolic link
// between the checks is refused (the descriptor-based check opens it
// without following a link), never chmod'ed through.
func TestPrepareRunDirReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	mkdirMode(0o777)(t, dir, "")
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.Chmod(elsewhere, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := repairRunDir(dir, fi); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("repairRunDir of a directory replaced by a link = %v, want an error naming %s", err, dir)
	}
	if fi, err := os.Stat(elsewhere); err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("the link's target: %v %v, want it untouched (0777)", fi, err)
	}
}
