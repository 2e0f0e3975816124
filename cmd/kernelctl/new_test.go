package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/proctest"
)

// interpreters names what each language's plugin runs on.
var interpreters = map[string]string{"go": "go", "python": "python3", "node": "node"}

// TestNewPlugin does what a new author does, from an empty directory, in
// each language: `kernelctl new hello --lang L`, then `kernelctl validate
// hello` and `kernelctl conformance hello`, which must pass as generated,
// and so must `kernelctl conformance --confine hello` where Landlock
// enforces it (its minimal permissions are enough), then `kernelctl
// install hello --home H` and `kernelctl run --home H --once`, which
// starts it (the README's "Write a plugin"). The files written are held to
// golden files (the one-file SDKs to their source).
func TestNewPlugin(t *testing.T) {
	for _, lang := range []string{"go", "python", "node"} {
		t.Run(lang, func(t *testing.T) {
			proctest.Interpreter(t, interpreters[lang])
			if lang == "python" && confineEnforced() {
				proctest.RealPython(t) // not a version manager's shim, which runs what --confine denies
			}
			work := t.TempDir()
			var created string
			t.Run("as a new user", func(t *testing.T) {
				t.Chdir(work)
				kernelctl := func(args ...string) string {
					t.Helper()
					var stdout, stderr bytes.Buffer
					if code := run(args, &stdout, &stderr); code != exitOK {
						t.Fatalf("kernelctl %s: exit code %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
					}
					return stdout.String()
				}
				created = kernelctl("new", "hello", "--lang", lang)
				if src, err := os.ReadFile(filepath.Join("hello", languages[lang].source)); err != nil || bytes.Contains(src, []byte(newVersion)) {
					t.Errorf("the scaffold's %s repeats the manifest's version %s (err %v): the SDK reads it from the environment", languages[lang].source, newVersion, err)
				}
				kernelctl("validate", "hello")
				if report := kernelctl("conformance", "hello"); !strings.Contains(report, "0 warned, 0 failed, 0 skipped") {
					t.Errorf("conformance:\n%s", report)
				}
				if confineEnforced() {
					report := kernelctl("conformance", "--confine", "hello")
					if !strings.Contains(report, "\nconfinement: require: landlock ") || !strings.Contains(report, "0 warned, 0 failed, 0 skipped") {
						t.Errorf("conformance --confine:\n%s", report)
					}
				}
				if out := kernelctl("install", "hello", "--home", "H"); !strings.HasPrefix(out, "hello 0.1.0: installed from hello (directory)\n") {
					t.Errorf("install:\n%s", out)
				}
				if out := kernelctl("run", "--home", "H", "--once"); !strings.Contains(out, "generation 1: 1 member") || !strings.Contains(out, "hello  0.1.0  running") {
					t.Errorf("run --once:\n%s", out)
				}
			})
			if created != "" {
				checkGolden(t, "new-"+lang, withoutRepo(t, scaffoldText(t, created, work, "hello")))
			}
			noChildren(t)
		})
	}
}

// scaffoldText is new's output followed by each text file it wrote into
// dir under work, the SDK copies checked against their source instead.
func scaffoldText(t *testing.T, created, work, dir string) []byte {
	t.Helper()
	b := bytes.NewBufferString(created)
	for _, line := range strings.Split(strings.TrimSpace(created), "\n")[1:] {
		path := strings.TrimSpace(line)
		if !strings.HasPrefix(path, dir+string(filepath.Separator)) {
			continue
		}
		name := strings.TrimPrefix(path, dir+string(filepath.Separator))
		data, err := os.ReadFile(filepath.Join(work, path))
		if err != nil {
			t.Fatal(err)
		}
		switch name {
		case "extkernel.py", "extkernel.js":
			lang := map[string]string{"extkernel.py": "python", "extkernel.js": "node"}[name]
			want, err := os.ReadFile(filepath.Join(repoRoot(t), "sdk", lang, name))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, want) {
				t.Errorf("%s differs from sdk/%s/%s", path, lang, name)
			}
			continue
		case "go.mod": // its indirect requirements follow the SDK's: not golden
			for _, want := range []string{"module hello\n", "\nrequire github.com/extkernel/extkernel v0.0.0\n",
				"\nreplace github.com/extkernel/extkernel => " + relTo(t, filepath.Join(work, "hello"), repoRoot(t)) + "\n"} {
				if !bytes.Contains(data, []byte(want)) {
					t.Errorf("go.mod lacks %q:\n%s", want, data)
				}
			}
			continue
		case "go.sum", filepath.Join("bin", "hello"):
			continue
		}
		b.WriteString("-- " + name + " --\n")
		b.Write(data)
	}
	return b.Bytes()
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNewConfigAndDir checks that the point and slot come from the host
// config, and that --dir places the package.
func TestNewConfigAndDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub", "pkg")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"new", "notes", "--lang", "python", "--dir", dir, "--config", demoConfig}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name": "notes"`, `"intercepts": ["prompt.submit"]`, `"replaces": ["context.compactor"]`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("plugin.json lacks %s:\n%s", want, data)
		}
	}
	if src, err := os.ReadFile(filepath.Join(dir, "main.py")); err != nil || !strings.Contains(string(src), `@p.intercept("prompt.submit")`) {
		t.Errorf("main.py: %v\n%s", err, src)
	}
}

// TestNewRefuses checks the arguments new refuses, and that it leaves
// nothing behind then.
func TestNewRefuses(t *testing.T) {
	parent := t.TempDir()
	full := filepath.Join(parent, "full")
	writeFile(t, filepath.Join(full, "keep.txt"), "mine")
	file := filepath.Join(parent, "file")
	writeFile(t, file, "x")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"bad name", []string{"new", "Hello", "--lang", "go"}, exitUsage, `kernelctl: new: name: "Hello" is not a valid package name`},
		{"no lang", []string{"new", "hello"}, exitUsage, `kernelctl: new: --lang must be go, python or node, not ""`},
		{"bad lang", []string{"new", "hello", "--lang", "rust"}, exitUsage, `kernelctl: new: --lang must be go, python or node, not "rust"`},
		{"not empty", []string{"new", "hello", "--lang", "python", "--dir", full}, exitFailed, "kernelctl: new: refusing to overwrite " + full + ": the directory is not empty"},
		{"a file", []string{"new", "hello", "--lang", "python", "--dir", file}, exitFailed, "kernelctl: new: refusing to overwrite " + file + ": it exists and is not a directory"},
		{"bad sdk", []string{"new", "hello", "--lang", "go", "--dir", filepath.Join(parent, "hello"), "--sdk", parent}, exitUsage, "kernelctl: new: --sdk: open " + parent + "/go.mod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit code = %d, want %d; stderr: %s", code, tt.code, stderr.String())
			}
			if !strings.HasPrefix(stderr.String(), tt.stderr) {
				t.Errorf("stderr = %q, want prefix %q", stderr.String(), tt.stderr)
			}
		})
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("%s holds %v, want only full and file", parent, entries)
	}
	if data, _ := os.ReadFile(filepath.Join(full, "keep.txt")); string(data) != "mine" {
		t.Errorf("keep.txt = %q", data)
	}
}

// relTo is target relative to dir, as a go.mod replace writes it.
func relTo(t *testing.T, dir, target string) string {
	t.Helper()
	rel, err := filepath.Rel(dir, target)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}
