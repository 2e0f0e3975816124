//go:build unix

package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/internal/pinexec"
	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// swapStarts is how many times each racing test starts its plugin, in
// each case (bash; Python, slower to start, a quarter as many).
const swapStarts = 40

// swapper puts text at path, as an attacker who can write the package
// directory would.
type swapper func(t *testing.T, path, text string)

// renameOver writes text beside path's directory and renames it over path:
// a new file at the name, the old one untouched.
func renameOver(t *testing.T, path, text string) {
	tmp := filepath.Join(filepath.Dir(filepath.Dir(path)), "swap-"+filepath.Base(path))
	err := os.WriteFile(tmp, []byte(text), 0o644)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		t.Error(err)
	}
}

// rewriteInPlace truncates the file at path and writes text into it: the
// same file, new content.
func rewriteInPlace(t *testing.T, path, text string) {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Error(err)
	}
}

// swapTally counts what the starts of a racing test ran.
type swapTally struct {
	pinned, swapped int // ran the pinned content, or the swapped one
	refused         int // refused by the pin check (the package differed)
	failed          []string
}

func (s swapTally) String() string {
	return fmt.Sprintf("%d ran the pinned content, %d ran the swapped content, %d refused by the pin, %d failed otherwise %q",
		s.pinned, s.swapped, s.refused, len(s.failed), s.failed)
}

// startAndAsk starts pkg and asks its provider "version": pinned and
// swapped are the two answers expected; anything else is a failure.
func (s *swapTally) startAndAsk(t *testing.T, pkg *pluginpkg.Package, opts Options, pinned, swapped string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, pkg, opts)
	var pe *pinexec.PinMismatchError
	switch {
	case errors.As(err, &pe):
		s.refused++
		return
	case err != nil:
		s.failed = append(s.failed, err.Error())
		return
	}
	defer closeClient(t, c)
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "version"})
	switch {
	case err != nil:
		s.failed = append(s.failed, err.Error())
	case string(out) == `"`+pinned+`"`:
		s.pinned++
	case string(out) == `"`+swapped+`"`:
		s.swapped++
	default:
		s.failed = append(s.failed, "answered "+string(out))
	}
}

// raceSwaps starts pkg n times while file (in pkg) is swapped from
// pinnedText (which answers v1) to swappedText (v2): by the hook in the
// moment between the pin check and the exec (and put back after the
// start), or, concurrent, by a goroutine flipping it all along. No copy
// of the package is left behind.
func raceSwaps(t *testing.T, pkg *pluginpkg.Package, n int, file string, swap swapper, concurrent bool, pinnedText, swappedText string) (tally swapTally) {
	t.Helper()
	path := filepath.Join(pkg.Dir, file)
	const pinned, swapped = "v1", "v2"
	opts, _ := testOptions(t)
	tmp := privateTemp(t)
	defer func() {
		if left := entries(t, tmp); len(left) != 0 {
			t.Errorf("left in TMPDIR: %q", left)
		}
	}()
	if !concurrent {
		beforeExec = func(string) { swap(t, path, swappedText) }
		defer func() { beforeExec = nil }()
		for range n {
			tally.startAndAsk(t, pkg, opts, pinned, swapped)
			swap(t, path, pinnedText)
		}
		return tally
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				swap(t, path, pinnedText)
				return
			default:
			}
			swap(t, path, swappedText)
			swap(t, path, pinnedText)
		}
	})
	for range n {
		tally.startAndAsk(t, pkg, opts, pinned, swapped)
	}
	close(stop)
	wg.Wait()
	return tally
}

var swapCases = []struct {
	name       string
	swap       swapper
	concurrent bool
}{
	{"renamed over between check and exec", renameOver, false},
	{"rewritten in place between check and exec", rewriteInPlace, false},
	{"renamed over all along", renameOver, true},
	{"rewritten in place all along", rewriteInPlace, true},
}

// TestPackagePinSwapRace starts a package-pinned bash plugin (bash reads
// plugin.sh by name once it runs) swapStarts times per case while its
// script is swapped for one answering v2: renamed over or rewritten in
// place, in the moment between the pin check and the exec (the hook), or
// all along by a goroutine. The swapped script never runs: a start runs
// the pinned script or is refused. With a hook, every start runs the
// pinned script.
func TestPackagePinSwapRace(t *testing.T) {
	for _, tt := range swapCases {
		t.Run(tt.name, func(t *testing.T) {
			pkg, _ := installScript(t)
			pin, err := pkg.PackagePin()
			if err != nil {
				t.Fatal(err)
			}
			pkg.Pin = pin
			v1, err := os.ReadFile(filepath.Join(pkg.Dir, "plugin.sh"))
			if err != nil {
				t.Fatal(err)
			}
			v2 := strings.Replace(string(v1), "VERSION=v1", "VERSION=v2", 1)
			got := raceSwaps(t, pkg, swapStarts, "plugin.sh", tt.swap, tt.concurrent, string(v1), v2)
			t.Logf("%d starts: %s", swapStarts, got)
			if got.swapped != 0 || len(got.failed) != 0 || got.pinned+got.refused != swapStarts ||
				!tt.concurrent && got.pinned != swapStarts {
				t.Errorf("%d starts: %s; want every start to run the pinned script%s", swapStarts, got,
					map[bool]string{true: " or be refused"}[tt.concurrent])
			}
		})
	}
}

// pyMain is a plugin in Python with no SDK: it answers initialize
// (declaring the provider "version"), provider/invoke (the VERSION of the
// module helper.py, which it imports from its package), ping and shutdown.
const pyMain = `import json, os, sys
from helper import VERSION

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        res = {"protocol_version": "1.0.0", "name": os.environ["EXTKERNEL_PLUGIN_NAME"],
               "version": os.environ["EXTKERNEL_PLUGIN_VERSION"], "providers": [{"ref": "version"}]}
    elif method == "provider/invoke":
        res = {"output": VERSION}
    else:
        res = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}) + "\n")
    sys.stdout.flush()
`

const pyManifest = `{"format": 1, "name": "py", "version": "1.0.0",
  "runtime": {"command": "python3", "args": ["main.py"], "handshake_timeout": "10s"}}`

// installPython installs the Python plugin (main.py importing helper.py,
// which holds helperText) and returns it, with python3 alone on PATH: a
// link to the interpreter itself, so that a version manager's shim (a
// script that looks for the interpreter at every start) does not slow the
// test's many starts.
func installPython(t *testing.T, helperText string) *pluginpkg.Package {
	t.Helper()
	python := proctest.Interpreter(t, "python3")
	out, err := exec.Command(python, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("%s: %v", python, err)
	}
	pathDir := t.TempDir()
	if err := os.Symlink(strings.TrimSpace(string(out)), filepath.Join(pathDir, "python3")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", pathDir)
	pkg := plugintestInstall(t, "py", pyManifest)
	for name, text := range map[string]string{"main.py": pyMain, "helper.py": helperText} {
		if err := os.WriteFile(filepath.Join(pkg.Dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return pkg
}

// plugintestInstall installs a package with manifest and no binaries.
func plugintestInstall(t *testing.T, name, manifest string) *pluginpkg.Package {
	t.Helper()
	pkg := addPackage(t, t.TempDir(), name, manifest)
	for _, b := range binaries {
		if err := os.Remove(filepath.Join(pkg.Dir, b)); err != nil {
			t.Fatal(err)
		}
	}
	return pkg
}

// TestPackagePinPythonModule swaps the module a package-pinned Python
// plugin imports from its package (helper.py), as TestPackagePinSwapRace
// swaps a script: the swapped module never runs. A module Python reads
// after its start is as much the package's as the script it was given.
func TestPackagePinPythonModule(t *testing.T) {
	const v1, v2 = "VERSION = 'v1'\n", "VERSION = 'v2'\n"
	for _, tt := range swapCases {
		t.Run(tt.name, func(t *testing.T) {
			pkg := installPython(t, v1)
			pin, err := pkg.PackagePin()
			if err != nil {
				t.Fatal(err)
			}
			pkg.Pin = pin
			const n = swapStarts / 4
			got := raceSwaps(t, pkg, n, "helper.py", tt.swap, tt.concurrent, v1, v2)
			t.Logf("%d starts: %s", n, got)
			if got.swapped != 0 || len(got.failed) != 0 || got.pinned+got.refused != n ||
				!tt.concurrent && got.pinned != n {
				t.Errorf("%d starts: %s; want every start to run the pinned module%s", n, got,
					map[bool]string{true: " or be refused"}[tt.concurrent])
			}
		})
	}
}

// TestPackagePinPlantedBytecode plants, in the package's __pycache__
// (which a package digest skips), the bytecode of a module helper.py
// answering v2, stamped with the source's size and modification time, so
// that Python would load it instead of the pinned source: the pinned
// plugin runs its pinned source all the same.
func TestPackagePinPlantedBytecode(t *testing.T) {
	const v1, v2 = "VERSION = 'v1'\n", "VERSION = 'v2'\n"
	pkg := installPython(t, v2)
	helper := filepath.Join(pkg.Dir, "helper.py")
	compile := exec.Command("python3", "-m", "py_compile", helper)
	compile.Env = []string{"PATH=" + os.Getenv("PATH")} // as the plugin's: no PYTHONPYCACHEPREFIX
	if out, err := compile.CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	fi, err := os.Stat(helper)
	if err != nil {
		t.Fatal(err)
	}
	rewriteInPlace(t, helper, v1) // same size
	if err := os.Chtimes(helper, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	pin, err := pkg.PackagePin()
	if err != nil {
		t.Fatal(err)
	}
	pkg.Pin = pin
	opts, _ := testOptions(t)
	var got swapTally
	got.startAndAsk(t, pkg, opts, "v1", "v2")
	if got.pinned != 1 {
		t.Errorf("%s; want the pinned source to run", got)
	}
	// Unpinned, the package runs from its directory, and Python loads the
	// planted bytecode: what the pin's copy leaves out.
	pkg.Pin = ""
	got = swapTally{}
	got.startAndAsk(t, pkg, opts, "v1", "v2")
	if got.swapped != 1 {
		t.Errorf("unpinned: %s; want the planted bytecode to run (else this test proves nothing)", got)
	}
}
