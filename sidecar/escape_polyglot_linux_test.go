//go:build linux

package sidecar

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/pluginpkg"
)

// escapeLang is the hostile plugin in another language: its interpreter,
// its script (testdata/plugins/escape) and its SDK's file.
type escapeLang struct {
	name, interpreter, script, sdk string
}

var escapeLangs = []escapeLang{
	{"python", "python3", "escape.py", "../sdk/python/extkernel.py"},
	{"node", "node", "escape.js", "../sdk/node/extkernel.js"},
}

// polyglotCases are the cases the Python and Node.js plugins attempt, as
// the Go one does (their providers have the same names).
var polyglotCases = []string{"ssh-key", "other-package-data", "tcp-other-port", "exec-shell"}

// TestEscapePolyglot makes attempts of the suite from Python and Node.js
// plugins on their SDKs, each started confined under "require" with its
// package read, ${data} written and TCP to one port: each is stopped as
// the Go plugin's is, while reading its own script works. Python runs
// through a PATH whose python3 is a link to the interpreter itself: a
// version manager's shim (pyenv's python3 is a bash script that runs
// pyenv) would need bash and pyenv granted in exec.
func TestEscapePolyglot(t *testing.T) {
	w := newEscapeWorld(t)
	if abi := w.landlockABI(t); abi < minimalABI {
		t.Skipf("Landlock ABI %d: TestEscapeSuite reports what this kernel does not enforce", abi)
	}
	var rows []escapeRow
	for _, lang := range escapeLangs {
		t.Run(lang.name, func(t *testing.T) {
			if lang.name == "python" {
				pythonFirstOnPATH(t)
			}
			pkg := w.installScript(t, lang)
			c, err := Start(t.Context(), pkg, w.requireOpts())
			if err != nil {
				t.Fatal(err)
			}
			got := attempt(t, c, "read", escapeAttempt{Path: filepath.Join(pkg.Dir, lang.script)})
			closeEscape(t, c)
			if !strings.HasPrefix(got, "ok: ") {
				t.Fatalf("reading its own script: %q, want ok", got)
			}
			for _, name := range polyglotCases {
				tc := caseNamed(name)
				c, err := Start(t.Context(), pkg, w.requireOpts())
				if err != nil {
					t.Fatal(err)
				}
				got, escaped := w.attemptOnce(t, c, tc)
				rows = append(rows, escapeRow{lang.name + " " + name, tc.by, outcomeOf(escaped), got})
			}
		})
	}
	logEscapeTable(t, "Python and Node.js plugins", rows)
}

// requireOpts are the world's options with confinement "require".
func (w *escapeWorld) requireOpts() Options {
	opts := w.opts
	opts.Confinement = pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire}
	return opts
}

// pythonFirstOnPATH puts first on PATH, for the test, a directory whose
// python3 is a link to the interpreter python3 runs (sys.executable), past
// a version manager's shim.
func pythonFirstOnPATH(t *testing.T) {
	t.Helper()
	python := proctest.Interpreter(t, "python3")
	out, err := exec.Command(python, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("%s: %v", python, err)
	}
	dir := t.TempDir()
	if err := os.Symlink(strings.TrimSpace(string(out)), filepath.Join(dir, "python3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// installScript installs the hostile plugin in lang as package
// "escape-<lang>" of the world's kernel home, with its SDK's file and the
// net permissions, and returns it.
func (w *escapeWorld) installScript(t *testing.T, lang escapeLang) *pluginpkg.Package {
	t.Helper()
	proctest.Interpreter(t, lang.interpreter)
	name := "escape-" + lang.name
	manifest := `{"format": 1, "name": "` + name + `", "version": "1.0.0",
  "runtime": {"command": "` + lang.interpreter + `", "args": ["` + lang.script + `"], "handshake_timeout": "20s"},
  "permissions": {"fs": {"read": ["${package}"], "write": ["${data}", "${tmp}"]}, "net": {"connect": ["*:` + w.granted.port() + `"]}}}`
	pkg := plugintest.Install(t, w.root, name, manifest, binDir)
	for _, f := range []string{filepath.Join("..", "testdata", "plugins", "escape", lang.script), lang.sdk} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(pkg.Dir, filepath.Base(f)), string(b))
	}
	return pkg
}

// TestConfinedAllowed is the suite's control: the hostile plugin,
// confined under "require" with its package read, ${data} and ${tmp}
// written, TCP to one port and its own executable, does what those grant,
// and each succeeds: read its package, write, rename, truncate and link
// in ${data} and ${tmp}, connect to the granted port (which sees the
// connection), resolve localhost from /etc/hosts, run itself. A denial in
// the suite is the confinement's, not a plugin that cannot work.
func TestConfinedAllowed(t *testing.T) {
	w := newEscapeWorld(t)
	if abi := w.landlockABI(t); abi < minimalABI {
		t.Skipf("Landlock ABI %d: \"require\" refuses every plugin here", abi)
	}
	c, err := w.start(t, permNet, pluginpkg.ConfineRequire)
	if err != nil {
		t.Fatal(err)
	}
	defer closeEscape(t, c)
	tmp := filepath.Join(w.opts.DataRoot, ".tmp", "escape")
	if !slices.Contains(c.Confinement().Effective.Write, tmp) {
		t.Fatalf("no ${tmp} among the effective writes %q", c.Confinement().Effective.Write)
	}
	data := func(name string) string { return filepath.Join(w.data, name) }
	steps := []struct {
		do   string
		in   escapeAttempt
		want string // the answer's start
	}{
		{"read", escapeAttempt{Path: filepath.Join(w.pkgDir, "notes.txt")}, "ok: " + notesText},
		{"write", escapeAttempt{Path: data("allowed")}, "ok"},
		{"rename", escapeAttempt{Path: data("allowed"), To: data("renamed")}, "ok"},
		{"link", escapeAttempt{Path: data("renamed"), To: data("linked")}, "ok"},
		{"symlink", escapeAttempt{Path: data("renamed"), To: data("symlinked")}, "ok: escaped"},
		{"truncate", escapeAttempt{Path: data("renamed")}, "ok"},
		{"write", escapeAttempt{Path: filepath.Join(tmp, "scratch")}, "ok"},
		{"dial-tcp", escapeAttempt{Addr: w.granted.addr}, "ok: connected to " + w.granted.addr},
		{"lookup-host", escapeAttempt{Path: "localhost"}, "ok: "},
		{"exec", escapeAttempt{Path: filepath.Join(w.pkgDir, "escape"), Args: []string{"ids"}}, fmt.Sprintf("ok: euid=%d caps=0000000000000000", os.Geteuid())},
	}
	for _, s := range steps {
		if got := attempt(t, c, s.do, s.in); !strings.HasPrefix(got, s.want) {
			t.Errorf("%s %+v: %q, want %q", s.do, s.in, got, s.want)
		}
	}
	if b, err := os.ReadFile(data("linked")); err != nil || len(b) != 0 {
		t.Errorf("the truncated file, through its link: %q, %v; want it empty", b, err)
	}
	recv(t, w.granted.hit, "the connection to the granted port")
	if n := w.granted.hits.Load(); n != 1 {
		t.Errorf("the granted port saw %d connections, want 1", n)
	}
	if !slices.Contains(c.Confinement().Effective.Connect, "*:"+w.granted.port()) {
		t.Errorf("effective connect = %q", c.Confinement().Effective.Connect)
	}
}
