package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// archiveEntry is one entry of an archive a test builds.
type archiveEntry struct {
	name, body string
	// link makes the entry a symbolic link to it.
	link string
	// claim makes the header claim that size; the content is not written.
	claim int64
}

// writeTarGz writes entries as a .tar.gz at path, regular files 0644.
func writeTarGz(t *testing.T, path string, entries ...archiveEntry) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	closed := true
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(e.body))}
		switch {
		case e.link != "":
			h.Typeflag, h.Linkname, h.Size = tar.TypeSymlink, e.link, 0
		case e.claim > 0:
			h.Size = e.claim
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.claim > 0 { // the header claims what is never written
			closed = false
			break
		}
		tw.Write([]byte(e.body))
	}
	if closed {
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	gz.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeZip writes entries as a .zip at path, deflated, regular files 0644.
func writeZip(t *testing.T, path string, entries ...archiveEntry) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(0o644)
		body := e.body
		if e.link != "" {
			h.SetMode(fs.ModeSymlink | 0o777)
			body = e.link
		}
		var err error
		if e.claim > 0 {
			h.Method, h.CRC32 = zip.Store, crc32.ChecksumIEEE([]byte(body))
			h.CompressedSize64, h.UncompressedSize64 = uint64(len(body)), uint64(e.claim)
			w, cerr := zw.CreateRaw(h)
			if cerr == nil {
				_, cerr = w.Write([]byte(body))
			}
			err = cerr
		} else {
			w, cerr := zw.CreateHeader(h)
			if cerr == nil {
				_, cerr = w.Write([]byte(body))
			}
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// declarative is the manifest of a declarative package.
func declarative(name, version, extra string) string {
	return fmt.Sprintf(`{"format": 1, "name": %q, "version": %q%s}`+"\n", name, version, extra)
}

// kvProvides and needsKV are the manifest fields of a storage.kv provider
// and of a package requiring it.
const (
	kvProvides = `, "provides": [{"capability": "storage.kv", "version": "1.2.0"}]`
	needsKV    = `, "requires": [{"capability": "storage.kv", "version": "^1.0"}]`
)

// kctl runs kernelctl in this process and returns its exit code and
// output.
func kctl(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// treeSnapshot records every entry under dir: path, mode, a file's
// content, a link's target and a directory's modification time, so that
// an entry created and removed again shows.
func treeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		switch {
		case fi.IsDir():
			v += " " + fi.ModTime().String()
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %q", data)
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGoldenInstall installs, reinstalls, upgrades (dry run first), rolls
// back and forward a package from a .tar.gz, a .zip and a directory, with a
// generation recorded by `run --once` so that the plans show reloads with
// their reasons. Each output is held to a golden file.
func TestGoldenInstall(t *testing.T) {
	src, home := t.TempDir(), filepath.Join(t.TempDir(), "home")
	kv1 := writeTarGz(t, filepath.Join(src, "kv-1.0.0.tar.gz"),
		archiveEntry{name: "kv-1.0.0/plugin.json", body: declarative("kv", "1.0.0", kvProvides)},
		archiveEntry{name: "kv-1.0.0/README.md", body: "kv 1.0.0\n"})
	kv2 := writeZip(t, filepath.Join(src, "kv-1.1.0.zip"),
		archiveEntry{name: "plugin.json", body: declarative("kv", "1.1.0", kvProvides)},
		archiveEntry{name: "README.md", body: "kv 1.1.0\n"}, archiveEntry{name: "NOTES.md", body: "new\n"})
	memory := filepath.Join(src, "memory")
	writeFile(t, filepath.Join(memory, "plugin.json"), declarative("memory", "0.3.0", needsKV))
	normalize := func(s string) []byte {
		return []byte(strings.NewReplacer(home, "<home>", src, "<src>").Replace(s))
	}
	steps := []struct {
		name   string
		args   []string
		code   int
		golden bool
	}{
		{"install-kv", []string{"install", kv1}, exitOK, true},
		{"install-memory", []string{"install", memory}, exitOK, true},
		{"", []string{"run", "--once"}, exitOK, false}, // records generation 1
		{"install-unchanged", []string{"install", kv1}, exitOK, true},
		{"upgrade-dry-run", []string{"upgrade", kv2, "--dry-run"}, exitOK, true},
		{"upgrade", []string{"upgrade", kv2}, exitOK, true},
		{"upgrade-unchanged", []string{"upgrade", kv2}, exitOK, true},
		{"rollback", []string{"rollback", "kv"}, exitOK, true},
		{"rollback-json", []string{"rollback", "kv", "--json"}, exitOK, true},
		{"upgrade-json", []string{"upgrade", kv1, "--dry-run", "--json"}, exitOK, true}, // the second rollback rolled forward
	}
	for _, s := range steps {
		var before map[string]string
		if strings.Contains(s.name, "dry-run") {
			before = treeSnapshot(t, home)
		}
		code, stdout, stderr := kctl(append(s.args, "--home", home)...)
		if code != s.code {
			t.Fatalf("%v: exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", s.args, code, s.code, stdout, stderr)
		}
		if s.golden {
			checkGolden(t, s.name, normalize(stdout))
		}
		if before != nil && !reflect.DeepEqual(before, treeSnapshot(t, home)) {
			t.Errorf("%v wrote to the home", s.args)
		}
	}
	code, _, stderr := kctl("install", kv1, "--home", home)
	want := `kernelctl: package "kv" in ` + home + `: already installed: version 1.1.0 is installed, and the source (version 1.0.0) holds other files ('kernelctl upgrade' or --upgrade replaces it)` + "\n"
	if code != exitFailed || stderr != want {
		t.Errorf("install over another version: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := kctl("rollback", "memory", "--home", home); code != exitFailed ||
		stderr != `kernelctl: package "memory" in `+home+": no previous version kept\n" {
		t.Errorf("rollback without a previous version: exit %d, stderr %q", code, stderr)
	}
}

// TestInstallRefusesHostile installs and upgrades hostile archives into a
// home: each is refused (exit 1) naming the entry and the rule, and the
// home is byte for byte as it was.
func TestInstallRefusesHostile(t *testing.T) {
	src := t.TempDir()
	manifest := archiveEntry{name: "plugin.json", body: declarative("evil", "1.0.0", "")}
	zeros := strings.Repeat("\x00", 4<<20)
	tests := []struct {
		name, file string
		entries    []archiveEntry
		says       string
	}{
		{"dot-dot", "a.tar.gz", []archiveEntry{manifest, {name: "../../escape", body: "x"}}, `entry "../../escape": the path leaves the package (..) (rule path)`},
		{"absolute", "b.zip", []archiveEntry{manifest, {name: "/tmp/escape", body: "x"}}, `entry "/tmp/escape": the path is absolute (rule path)`},
		{"symlink out", "c.tar.gz", []archiveEntry{manifest, {name: "etc", link: "../../../etc"}}, `entry "etc": the symbolic link to "../../../etc" points outside the package (rule link)`},
		{"claims 1 GB", "d.tar.gz", []archiveEntry{manifest, {name: "big", claim: 1 << 30}}, `entry "big": the file claims 1024 MiB, more than the 128 MiB a file may hold (rule entry-size)`},
		{"zip claims 1 GB", "e.zip", []archiveEntry{manifest, {name: "big", body: "x", claim: 1 << 30}}, `entry "big": the file claims 1024 MiB`},
		{"zip bomb", "f.zip", []archiveEntry{manifest, {name: "zeros", body: zeros}}, `entry "zeros": the entry unpacks to 4 MiB from`},
		{"tar.gz bomb", "g.tar.gz", []archiveEntry{manifest, {name: "zeros", body: zeros}}, `more than 100 times what it compresses to`},
	}
	home := filepath.Join(t.TempDir(), "home")
	writeFile(t, filepath.Join(src, "evil", "plugin.json"), declarative("evil", "0.9.0", ""))
	if code, _, stderr := kctl("install", filepath.Join(src, "evil"), "--home", home); code != exitOK {
		t.Fatalf("install: %s", stderr)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(src, tt.file)
			if strings.HasSuffix(tt.file, ".zip") {
				writeZip(t, path, tt.entries...)
			} else {
				writeTarGz(t, path, tt.entries...)
			}
			before := treeSnapshot(t, home)
			for _, args := range [][]string{{"install", path}, {"install", "--upgrade", path}, {"upgrade", path}, {"upgrade", "--dry-run", path}} {
				code, stdout, stderr := kctl(append(args, "--home", home)...)
				if code != exitFailed || stdout != "" || !strings.HasPrefix(stderr, "kernelctl: source "+path+": ") || !strings.Contains(stderr, tt.says) {
					t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant %q", args, code, stdout, stderr, tt.says)
				}
			}
			if after := treeSnapshot(t, home); !reflect.DeepEqual(before, after) {
				t.Errorf("the home changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestInstallCompletion: remove and rollback complete package names;
// install and upgrade complete files.
func TestInstallCompletion(t *testing.T) {
	all := "audit\nkvstore\nkvstore-next\nmemory\nredactor\nthemes\n:4\n"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"remove", ""}, all},
		{[]string{"rollback", "kv"}, "kvstore\nkvstore-next\n:4\n"},
		{[]string{"rollback", "kvstore", ""}, ":4\n"},
		{[]string{"install", ""}, ":0\n"},
	} {
		code, stdout, stderr := kctl(append([]string{"__complete", "--home", demoHome}, tt.args...)...)
		if code != exitOK || stdout != tt.want {
			t.Errorf("complete %v = %q (exit %d, %s), want %q", tt.args, stdout, code, stderr, tt.want)
		}
	}
}
