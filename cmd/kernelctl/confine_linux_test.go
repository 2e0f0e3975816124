package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// confineEnforced reports whether this kernel's Landlock enforces the
// minimal set under "require" (new_test.go runs the scaffold confined
// only then).
func confineEnforced() bool {
	v, err := ll.LandlockGetABIVersion()
	return err == nil && v >= 6
}

// confinedPackage writes a package running testdata/plugins/confined,
// built into its bin/, with an asset.txt and the manifest permissions
// perms (JSON), and returns its directory.
func confinedPackage(t *testing.T, perms string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "confined")
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "confined"), "../../testdata/plugins/confined")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(dir, "asset.txt"), "the package's own asset\n")
	writeFile(t, filepath.Join(dir, "plugin.json"), `{"format": 1, "name": "confined", "version": "1.0.0",
  "runtime": {"command": "./bin/confined"}, "permissions": `+perms+`}`)
	return dir
}

// confinedConfig writes a host config giving the confined plugin env, its
// plugin_env, and returns its path.
func confinedConfig(t *testing.T, env map[string]string) string {
	t.Helper()
	vars := map[string]any{}
	for k, v := range env {
		vars[k] = map[string]string{"value": v}
	}
	b, err := json.Marshal(map[string]any{"format": 1, "plugin_env": map[string]any{"confined": vars}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kernel.json")
	writeFile(t, path, string(b))
	return path
}

// servePong starts an HTTP server on 127.0.0.1 answering "pong", and returns
// its URL, its port and how many requests it served.
func servePong(t *testing.T) (url, port string, served *atomic.Int32) {
	t.Helper()
	served = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		fmt.Fprint(w, "pong")
	}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL + "/", port, served
}

// runConformance runs kernelctl conformance with args and returns its exit code and
// stdout.
func runConformance(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"conformance"}, args...), &stdout, &stderr)
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return code, stdout.String()
}

// TestConformanceConfined is issue 24's must-show: a well-behaved plugin
// with correct permissions (read its package, write its data, connect to
// its granted host:port) passes its whole conformance run confined under
// "require"; one that reads a file outside its permissions, or connects
// to a port it was not granted, fails it, and the report names what was
// denied. Landlock restricts ports, not hosts, so the grant is "*:P";
// "127.0.0.1:P" alone is refused under "require" (the last case) and
// enforced as its port under "best-effort", which the report says.
func TestConformanceConfined(t *testing.T) {
	if !confineEnforced() {
		t.Skip("this kernel's Landlock cannot enforce the minimal set")
	}
	url, port, served := servePong(t)
	other, otherPort, _ := servePong(t)
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	writeFile(t, secret, "not the plugin's")
	withNet := confinedPackage(t, `{"fs": {"read": ["${package}"], "write": ["${data}"]}, "net": {"connect": ["*:`+port+`"]}}`)
	hostOnly := confinedPackage(t, `{"fs": {"read": ["${package}"], "write": ["${data}"]}, "net": {"connect": ["127.0.0.1:`+port+`"]}}`)
	minimal := confinedPackage(t, `{"fs": {"read": ["${package}"], "write": ["${data}"]}}`)

	t.Run("well-behaved", func(t *testing.T) {
		code, out := runConformance(t, "--confine", "--config", confinedConfig(t, map[string]string{"CONFINED_URL": url}), withNet)
		if code != exitOK || !strings.Contains(out, "0 warned, 0 failed, 0 skipped") {
			t.Errorf("exit code %d, want %d:\n%s", code, exitOK, out)
		}
		for _, want := range []string{"\nconfinement: require: landlock ABI ", "call/provider/work    PASS  answered with a result\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("the report lacks %q:\n%s", want, out)
			}
		}
		if served.Load() == 0 {
			t.Error("the plugin never reached its granted server")
		}
		if strings.Contains(out, "denied") {
			t.Errorf("a well-behaved plugin was denied something:\n%s", out)
		}
	})
	t.Run("reads outside", func(t *testing.T) {
		cfg := confinedConfig(t, map[string]string{"CONFINED_READ": secret})
		if code, out := runConformance(t, "--config", cfg, minimal); code != exitOK {
			t.Fatalf("unconfined, the read succeeds: exit code %d\n%s", code, out)
		}
		code, out := runConformance(t, "--confine", "--config", cfg, minimal)
		denied := "denied: read " + secret + " (not in permissions.fs.read)"
		want := "call/provider/work    FAIL  answered error -32000: \"open " + secret + ": permission denied\"; " + denied + "\n"
		if code != exitFailed || !strings.Contains(out, want) || !strings.Contains(out, "was denied (docs/security.md, \"Confinement\"):\n  "+denied+"\n") {
			t.Errorf("exit code %d, want %d and %q listed:\n%s", code, exitFailed, want, out)
		}
		code, js := runConformance(t, "--confine", "--json", "--config", cfg, minimal)
		var rep conformanceOutput
		if err := json.Unmarshal([]byte(js), &rep); err != nil || code != exitFailed {
			t.Fatalf("--json: exit code %d, %v\n%s", code, err, js)
		}
		if len(rep.Denials) != 1 || rep.Denials[0] != denied || !strings.HasPrefix(rep.Confinement, "require: landlock ABI ") {
			t.Errorf("--json: confinement %q, denials %q", rep.Confinement, rep.Denials)
		}
	})
	t.Run("connects outside", func(t *testing.T) {
		code, out := runConformance(t, "--confine", "--config", confinedConfig(t, map[string]string{"CONFINED_URL": other}), withNet)
		want := "; denied: connect 127.0.0.1:" + otherPort + " (not in permissions.net.connect)\n"
		if code != exitFailed || !strings.Contains(out, want) {
			t.Errorf("exit code %d, want %d and %q:\n%s", code, exitFailed, want, out)
		}
	})
	t.Run("a host entry", func(t *testing.T) {
		code, out := runConformance(t, "--confine", hostOnly)
		want := "FAIL  start ./bin/confined: confine: confinement required but not enforceable on this machine: connect 127.0.0.1:" + port
		if code != exitFailed || !strings.Contains(out, want) {
			t.Errorf("require: exit code %d, want %d and %q:\n%s", code, exitFailed, want, out)
		}
		code, out = runConformance(t, "--confine=best-effort", "--config", confinedConfig(t, map[string]string{"CONFINED_URL": url}), hostOnly)
		if want := "any host on port " + port + " is reachable"; code != exitOK || !strings.Contains(out, want) {
			t.Errorf("best-effort: exit code %d, want %d and %q:\n%s", code, exitOK, want, out)
		}
	})
	noChildren(t)
}
