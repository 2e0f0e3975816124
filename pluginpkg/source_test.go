package pluginpkg

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/homefile/homefiletest"
)

// TestInstallRefusesHostileArchives installs, into a home holding a
// package, archives that each break one rule: every one is refused with
// a *SourceError naming the entry and the rule, and the home is exactly
// as it was: nothing was written, not even a lock or staging directory.
func TestInstallRefusesHostileArchives(t *testing.T) {
	manifest := testEntry{name: "plugin.json", body: pkgManifest("evil", "1.0.0")}
	with := func(es ...testEntry) []testEntry { return append([]testEntry{manifest}, es...) }
	zeros := strings.Repeat("\x00", 8<<20)
	files := func(n, size int) []testEntry {
		var es []testEntry
		for i := range n {
			es = append(es, testEntry{name: "f" + string(rune('a'+i)), body: strings.Repeat("x", size)})
		}
		return es
	}
	tests := []struct {
		name    string
		kind    string
		entries []testEntry
		limits  Limits
		rule    SourceRule
		entry   string
		says    string
	}{
		{"dot-dot", "tar.gz", with(testEntry{name: "../evil.txt", body: "x"}), Limits{}, RulePath, "../evil.txt", "the path leaves the package (..)"},
		{"dot-dot inside", "tar.gz", with(testEntry{name: "bin/../../evil", body: "x"}), Limits{}, RulePath, "bin/../../evil", "leaves the package"},
		{"absolute", "tar.gz", with(testEntry{name: "/etc/evil", body: "x"}), Limits{}, RulePath, "/etc/evil", "the path is absolute"},
		{"drive letter", "tar.gz", with(testEntry{name: "C:/evil", body: "x"}), Limits{}, RulePath, "C:/evil", "drive letter"},
		{"backslash", "tar.gz", with(testEntry{name: `bin\..\..\evil`, body: "x"}), Limits{}, RulePath, `bin\..\..\evil`, "backslash"},
		{"symlink out", "tar.gz", with(testEntry{name: "passwd", typ: tar.TypeSymlink, link: "../../../etc/passwd"}), Limits{}, RuleLink, "passwd", `the symbolic link to "../../../etc/passwd" points outside the package`},
		{"symlink absolute", "tar.gz", with(testEntry{name: "passwd", typ: tar.TypeSymlink, link: "/etc/passwd"}), Limits{}, RuleLink, "passwd", `points to the absolute path "/etc/passwd"`},
		{"symlink out through a link", "tar.gz", with(testEntry{name: "here", typ: tar.TypeSymlink, link: "."},
			testEntry{name: "out", typ: tar.TypeSymlink, link: "here/../x"}), Limits{}, RuleLink, "out", "points outside the package"},
		{"write through a link", "tar.gz", with(testEntry{name: "sub/", typ: tar.TypeDir}, testEntry{name: "d", typ: tar.TypeSymlink, link: "sub"},
			testEntry{name: "d/file", body: "x"}), Limits{}, RulePath, "d/file", `inside the symbolic link "d"`},
		{"inside a file", "tar.gz", with(testEntry{name: "f", body: "x"}, testEntry{name: "f/g", body: "y"}), Limits{}, RulePath, "f/g", `inside the file "f"`},
		{"hard link", "tar.gz", with(testEntry{name: "hard", typ: tar.TypeLink, link: "plugin.json"}), Limits{}, RuleLink, "hard", "hard link"},
		{"device", "tar.gz", with(testEntry{name: "dev", typ: tar.TypeChar}), Limits{}, RuleType, "dev", "device"},
		{"fifo", "tar.gz", with(testEntry{name: "pipe", typ: tar.TypeFifo}), Limits{}, RuleType, "pipe", "FIFO"},
		{"claims 1 GB", "tar.gz", with(testEntry{name: "big", claim: 1 << 30}), Limits{}, RuleEntrySize, "big", "the file claims 1024 MiB, more than the 128 MiB a file may hold"},
		{"bomb", "tar.gz", with(testEntry{name: "zeros", body: zeros}), Limits{}, RuleRatio, "zeros", "more than 100 times what it compresses to"},
		{"duplicate", "tar.gz", with(testEntry{name: "a", body: "1"}, testEntry{name: "./a", body: "2"}), Limits{}, RuleDuplicate, "./a", `a second entry named "a"`},
		{"dangling", "tar.gz", with(testEntry{name: "l", typ: tar.TypeSymlink, link: "nothing"}), Limits{}, RuleLink, "l", "dangles"},
		{"loop", "tar.gz", with(testEntry{name: "a", typ: tar.TypeSymlink, link: "b"}, testEntry{name: "b", typ: tar.TypeSymlink, link: "a"}), Limits{}, RuleLink, "a", "loops"},
		{"too many entries", "tar.gz", with(files(4, 1)...), Limits{Entries: 4}, RuleEntries, "fd", "more than 4 entries"},
		{"too large", "tar.gz", with(files(2, 600)...), Limits{TotalBytes: 1000}, RuleTotalSize, "fb", "more than the 1000 bytes a package may hold"},
		{"no manifest", "tar.gz", []testEntry{{name: "README", body: "x"}}, Limits{}, RuleManifest, "", "no plugin.json"},
		{"manifest link", "tar.gz", []testEntry{{name: "real.json", body: pkgManifest("evil", "1.0.0")}, {name: "plugin.json", typ: tar.TypeSymlink, link: "real.json"}},
			Limits{}, RuleManifest, "plugin.json", "the manifest is a symbolic link"},
		{"zip dot-dot", "zip", with(testEntry{name: "../evil.txt", body: "x"}), Limits{}, RulePath, "../evil.txt", "leaves the package"},
		{"zip absolute", "zip", with(testEntry{name: "/etc/evil", body: "x"}), Limits{}, RulePath, "/etc/evil", "absolute"},
		{"zip symlink out", "zip", with(testEntry{name: "passwd", typ: tar.TypeSymlink, link: "../etc/passwd"}), Limits{}, RuleLink, "passwd", "points outside the package"},
		{"zip claims 1 GB", "zip", with(testEntry{name: "big", body: "tiny", claim: 1 << 30}), Limits{}, RuleEntrySize, "big", "the file claims 1024 MiB"},
		{"zip bomb", "zip", with(testEntry{name: "zeros", body: zeros}), Limits{}, RuleRatio, "zeros", "the entry unpacks to 8 MiB from"},
		{"zip fifo", "zip", with(testEntry{name: "pipe", typ: tar.TypeFifo}), Limits{}, RuleType, "pipe", "a FIFO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if _, err := Install(home, writeArchive(t, "tar.gz", pkgEntries("demo", "1.0.0"))); err != nil {
				t.Fatal(err)
			}
			src := writeArchive(t, tt.kind, tt.entries)
			before := snapshotTree(t, home)
			for _, op := range []struct {
				name string
				run  func() error
			}{
				{"InstallSource", func() error {
					_, err := InstallSource(home, src, InstallOptions{Upgrade: true, Limits: tt.limits})
					return err
				}},
				{"PreviewInstall", func() error {
					p, err := PreviewInstall(home, src, InstallOptions{Upgrade: true, Limits: tt.limits})
					if err == nil {
						p.Close()
					}
					return err
				}},
			} {
				err := op.run()
				var se *SourceError
				if !errors.As(err, &se) || !errors.Is(err, ErrRefusedSource) {
					t.Fatalf("%s = %v, want a *SourceError", op.name, err)
				}
				if se.Rule != tt.rule || se.Entry != tt.entry || se.Source != src || !strings.Contains(err.Error(), tt.says) {
					t.Errorf("%s = %v (rule %s, entry %q); want rule %s, entry %q, saying %q", op.name, err, se.Rule, se.Entry, tt.rule, tt.entry, tt.says)
				}
				assertUnchanged(t, home, before)
			}
		})
	}
}

// TestInstallRefusesHostileSources covers what is not an entry of an
// archive: a file that is no archive, a truncated one, one that is a FIFO
// or claims more than a package holds, and package directories with a
// FIFO, a link out or a sparse 1 GiB file. Each is refused before any
// write.
func TestInstallRefusesHostileSources(t *testing.T) {
	dirWith := func(add func(t *testing.T, dir string)) func(t *testing.T) string {
		return func(t *testing.T) string {
			dir := t.TempDir()
			writeFile(t, dir, "plugin.json", pkgManifest("evil", "1.0.0"))
			add(t, dir)
			return dir
		}
	}
	tests := []struct {
		name  string
		make  func(t *testing.T) string
		rule  SourceRule
		entry string
		says  string
	}{
		{"not an archive", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "pkg.tar.gz")
			writeFile(t, filepath.Dir(p), "pkg.tar.gz", "plain text")
			return p
		}, RuleFormat, "", "neither the gzip nor the zip signature"},
		{"truncated", func(t *testing.T) string {
			p := writeArchive(t, "tar.gz", pkgEntries("evil", "1.0.0"))
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)/2], 0o644)
			return p
		}, RuleFormat, "plugin.json", "the archive is corrupt: unexpected EOF"},
		{"archive is a FIFO", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "pkg.zip")
			homefiletest.Mkfifo(t, p)
			return p
		}, RuleFormat, "", "not a regular file (a FIFO)"},
		{"archive claims 1 GiB", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "pkg.zip")
			homefiletest.Sparse(t, p, 1<<30)
			return p
		}, RuleTotalSize, "", "the archive is 1024 MiB, more than the 256 MiB"},
		{"directory with a FIFO", dirWith(func(t *testing.T, dir string) { homefiletest.Mkfifo(t, filepath.Join(dir, "pipe")) }),
			RuleType, "pipe", "the entry is a FIFO"},
		{"directory with a link out", dirWith(func(t *testing.T, dir string) { homefiletest.Symlink(t, "../../etc", filepath.Join(dir, "etc")) }),
			RuleLink, "etc", "points outside the package"},
		{"directory with a 1 GiB file", dirWith(func(t *testing.T, dir string) { homefiletest.Sparse(t, filepath.Join(dir, "big"), 1<<30) }),
			RuleEntrySize, "big", "the file claims 1024 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			src := tt.make(t)
			before := snapshotTree(t, home)
			_, err := InstallSource(home, src, InstallOptions{})
			var se *SourceError
			if !errors.As(err, &se) || se.Rule != tt.rule || se.Entry != tt.entry || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("InstallSource = %v; want rule %s, entry %q, saying %q", err, tt.rule, tt.entry, tt.says)
			}
			assertUnchanged(t, home, before)
		})
	}
}

// TestInstallArchiveManifestErrors checks that an invalid manifest in an
// archive is the *ValidationError, named after the archive and entry.
func TestInstallArchiveManifestErrors(t *testing.T) {
	src := writeArchive(t, "zip", []testEntry{{name: "pkg/", typ: tar.TypeDir}, {name: "pkg/plugin.json", body: `{"format":1,"name":"x"}`}})
	_, err := InstallSource(t.TempDir(), src, InstallOptions{})
	var ve *ValidationError
	if !errors.As(err, &ve) || err.Error() != src+":pkg/plugin.json: version: required field is missing" {
		t.Errorf("InstallSource = %v", err)
	}
}

// TestSourceErrorText pins the message format of a refusal.
func TestSourceErrorText(t *testing.T) {
	e := &SourceError{Source: "x.zip", Entry: "../a", Rule: RulePath, Detail: "the path leaves the package (..)"}
	if want := `source x.zip: entry "../a": the path leaves the package (..) (rule path)`; e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
	e = &SourceError{Source: "x.tar.gz", Rule: RuleFormat, Detail: "not a readable gzip stream", Err: errors.New("unexpected EOF")}
	if want := `source x.tar.gz: not a readable gzip stream: unexpected EOF (rule format)`; e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
}
