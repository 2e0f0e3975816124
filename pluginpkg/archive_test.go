package pluginpkg

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
	"testing"
)

// testEntry is one entry of an archive built by a test.
type testEntry struct {
	name string
	body string
	// typ is a tar type flag; 0 is a regular file.
	typ byte
	// mode is the permission bits; 0 means 0644.
	mode int64
	// link is a symbolic or hard link's target.
	link string
	// claim, when set, is the size the header claims instead of the
	// body's (the body is not written in full).
	claim int64
}

func (e testEntry) perm() int64 {
	if e.mode == 0 {
		return 0o644
	}
	return e.mode
}

// writeTarGz writes a gzip-compressed tar archive of entries to path. An
// entry with a claim gets a header claiming it and no content; it must be
// the last.
func writeTarGz(t testing.TB, path string, entries []testEntry) {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	complete := true
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.perm(), Typeflag: e.typ, Linkname: e.link, Size: int64(len(e.body)), Format: tar.FormatPAX}
		switch e.typ {
		case 0:
			h.Typeflag = tar.TypeReg
		case tar.TypeXGlobalHeader: // as git archive writes
			h = &tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "0123abcd"}}
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if e.claim > 0 {
			h.Size = e.claim
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.claim > 0 {
			complete = false // the header went out; the content never will
			break
		}
		if _, err := tw.Write([]byte(e.body)); h.Size > 0 && err != nil {
			t.Fatal(err)
		}
	}
	if complete {
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeZip writes a zip archive of entries to path: directories by a
// TypeDir type (their names end in "/"), symbolic links by TypeSymlink
// (the target is the content), FIFOs by TypeFifo. An entry with a claim
// is stored raw with a header claiming it.
func writeZip(t testing.TB, path string, entries []testEntry) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		mode := fs.FileMode(e.perm())
		body := e.body
		switch e.typ {
		case tar.TypeDir:
			mode |= fs.ModeDir
		case tar.TypeSymlink:
			mode, body = fs.ModeSymlink|0o777, e.link
		case tar.TypeFifo:
			mode |= fs.ModeNamedPipe
		}
		h.SetMode(mode)
		if e.claim > 0 {
			h.Method, h.CRC32 = zip.Store, crc32.ChecksumIEEE([]byte(body))
			h.CompressedSize64, h.UncompressedSize64 = uint64(len(body)), uint64(e.claim)
			w, err := zw.CreateRaw(h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(body))
			continue
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeArchive writes entries as kind ("tar.gz" or "zip") into a new file
// in a temporary directory and returns its path.
func writeArchive(t testing.TB, kind string, entries []testEntry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pkg."+kind)
	if kind == "zip" {
		writeZip(t, path, entries)
	} else {
		writeTarGz(t, path, entries)
	}
	return path
}

// pkgManifest is a valid manifest of a package called name at version.
func pkgManifest(name, version string) string {
	return `{"format":1,"name":"` + name + `","version":"` + version + `","runtime":{"command":"./bin/run"}}`
}

// pkgEntries is a complete package: manifest, executable, data file, a
// link inside the package.
func pkgEntries(name, version string) []testEntry {
	return []testEntry{
		{name: "plugin.json", body: pkgManifest(name, version)},
		{name: "bin/", typ: tar.TypeDir, mode: 0o755},
		{name: "bin/run", body: "#!/bin/sh\necho " + version + "\n", mode: 0o755},
		{name: "share/data.txt", body: "data " + version},
		{name: "run-link", typ: tar.TypeSymlink, link: "bin/run"},
	}
}

// snapshotTree records everything under dir that a write could change:
// each entry's path, type and permissions, a file's content, a link's
// target, and a directory's modification time (an entry created and
// removed again changes it).
func snapshotTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	return snapshot(t, dir, true)
}

// snapshotFiles is snapshotTree without directories' modification times:
// what a write left as it found may still have moved entries in and out.
func snapshotFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	return snapshot(t, dir, false)
}

func snapshot(t testing.TB, dir string, times bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return nil
			}
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		v := fi.Mode().String()
		switch {
		case fi.IsDir() && times:
			v += " " + fi.ModTime().String()
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			v += " -> " + target
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %q", data)
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertUnchanged fails unless dir is as snapshotted (by snapshotTree,
// or with times false by snapshotFiles).
func assertUnchanged(t testing.TB, dir string, before map[string]string, times ...bool) {
	t.Helper()
	if after := snapshot(t, dir, len(times) == 0 || times[0]); !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed:\nbefore %v\nafter  %v", dir, before, after)
	}
}
