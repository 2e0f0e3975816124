//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/extkernel/extkernel/admin"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// crashingKV is a kvstore 1.5.0 with no SDK, in POSIX sh: it completes
// its handshake (the providers get and put behind storage.kv) and exits
// on the first call.
const crashingKV = `#!/bin/sh
send() { printf '%s\n' "$1"; }
while IFS= read -r line || [ -n "$line" ]; do
	method=$(printf '%s\n' "$line" | sed -n 's/.*"method":"\([^"]*\)".*/\1/p')
	id=$(printf '%s\n' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\).*/\1/p')
	[ -n "$method" ] && [ -n "$id" ] || continue
	case $method in
	initialize) send '{"jsonrpc":"2.0","id":'"$id"',"result":{"protocol_version":"1.0.0","name":"kvstore","version":"1.5.0","provides":[{"capability":"storage.kv","version":"1.4.0"}],"providers":[{"ref":"get"},{"ref":"put"}]}}' ;;
	provider/invoke) echo "kvstore 1.5.0: crashing on a call" >&2; exit 3 ;;
	*) send '{"jsonrpc":"2.0","id":'"$id"',"result":{}}' ;;
	esac
done
`

// crashingKVPackage writes kvstore 1.5.0 as crashingKV and returns it.
func crashingKVPackage(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kvstore")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"format": 1, "name": "kvstore", "version": "1.5.0",
  "runtime": {"command": "sh", "args": ["kv.sh"]},
  "provides": [{"capability": "storage.kv", "version": "1.4.0", "methods": {"get": "get", "put": "put"}}]}`
	for name, body := range map[string]string{"plugin.json": manifest, "kv.sh": crashingKV} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// waitRunning waits for run's "running" line, showing its stderr if it
// exits first (its exit code is sent back on code, for the cleanup).
func waitRunning(t *testing.T, stdout *outBuffer, stderr *bytes.Buffer, code chan int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !strings.Contains(stdout.String(), "running; reload with SIGHUP") {
		select {
		case c := <-code:
			code <- c
			t.Fatalf("run exited %d:\n%s%s", c, stdout.String(), stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("run is not running after %v:\n%s", waitLimit, stdout.String())
		}
	}
}

// TestPackPushInstallRunBake walks the whole path with real plugins: pack
// and push kvstore 1.4.0 to an in-process registry, install it by tag,
// run the kernel (run --watch, in this process), upgrade on a bake to a
// 1.5.0 pushed the same way that crashes on every call, and call it: the
// kernel returns to 1.4.0 on its own, says why in its output and status,
// the state file records the digest of 1.4.0 again with no bake, and the
// next call is served by 1.4.0.
func TestPackPushInstallRunBake(t *testing.T) {
	buildDemo(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := strings.TrimPrefix(srv.URL, "http://")
	work := t.TempDir()
	home := filepath.Join(work, "home")
	for _, v := range []struct{ dir, tag string }{{kvPackage(t, "1.4.0"), "1.4.0"}, {crashingKVPackage(t), "1.5.0"}} {
		var p packOutput
		kctlJSON(t, 0, &p, "pack", v.dir, "-o", filepath.Join(work, v.tag+".oci"))
		var pushed pushOutput
		kctlJSON(t, 0, &pushed, "push", p.Layout, host+"/acme/kvstore:"+v.tag, "--plain-http")
	}
	var inst installOutput
	kctlJSON(t, 0, &inst, "install", "oci://"+host+"/acme/kvstore:1.4.0", "--plain-http", "--home", home)
	good, goodOrigin := inst.Package.Digest, inst.Origin
	cfg := filepath.Join(work, "kernel.json")
	if err := os.WriteFile(cfg, []byte(`{"format": 1, "home": "home", "supervision": {"crash_budget": 1, "crash_window": "1m",
  "backoff_min": "10ms", "backoff_max": "20ms"}}`), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := newOutBuffer(), &bytes.Buffer{}
	code := make(chan int, 1)
	go func() { code <- runContext(ctx, []string{"run", "--config", cfg, "--watch"}, stdout, stderr) }()
	t.Cleanup(func() { cancel(); <-code; noChildren(t) })
	waitRunning(t, stdout, stderr, code)
	if c, out, errOut := kctl("call", "provider", "plugin/kvstore/put", `{"key": "k", "value": 1}`, "--config", cfg); c != 0 {
		t.Fatalf("put to 1.4.0: exit %d\n%s%s", c, out, errOut)
	}

	kctlJSON(t, 0, &inst, "upgrade", "oci://"+host+"/acme/kvstore:1.5.0", "--plain-http", "--config", cfg, "--bake", "10m")
	if inst.Action != "upgraded" || inst.Bake == nil || inst.Bake.Duration != "10m0s" || inst.Bake.FromVersion != "1.4.0" {
		t.Fatalf("upgrade --bake: %+v bake %+v", inst, inst.Bake)
	}
	stdout.waitFor(t, "bake kvstore: watching kvstore 1.5.0 (from 1.4.0) for 10m0s")

	// Calls crash 1.5.0 past its budget of 1; calls made after the bake
	// failed are served by 1.4.0.
	deadline := time.Now().Add(waitLimit)
	for !strings.Contains(stdout.String(), "bake kvstore: kvstore returned to 1.4.0") {
		if time.Now().After(deadline) {
			t.Fatalf("no return to 1.4.0 within %v:\n%s%s", waitLimit, stdout.String(), stderr.String())
		}
		kctl("call", "provider", "plugin/kvstore/get", `"k"`, "--config", cfg)
	}
	if !strings.Contains(stdout.String(), "kvstore 1.5.0 failed its bake (crashed 2 times within 1m0s (budget 1)") {
		t.Errorf("run does not say why the bake failed:\n%s", stdout.String())
	}
	kctl("call", "provider", "plugin/kvstore/put", `{"key": "k", "value": 2}`, "--config", cfg)
	if c, out, errOut := kctl("call", "provider", "plugin/kvstore/get", `"k"`, "--config", cfg); c != 0 || strings.TrimSpace(out) != "2" {
		t.Errorf("put and get on 1.4.0 after the return: exit %d %q %s", c, out, errOut)
	}
	t.Logf("run printed:\n%s", stdout.String())
	var st admin.StatusAnswer
	kctlJSON(t, 0, &st, "status", "--config", cfg)
	if p := st.Plugins[0]; p.Version != "1.4.0" || p.Bake == nil || p.Bake.State != observe.BakeRolledBack || p.Bake.Errors == 0 ||
		!strings.Contains(p.Bake.Reason, "crashed 2 times") {
		t.Errorf("status after the return: %+v bake %+v", p, p.Bake)
	}
	if c, out, _ := kctl("status", "--config", cfg); c != 0 || !strings.Contains(out, "kvstore 1.5.0 (from 1.4.0): rolled back;") {
		t.Errorf("status text does not list the bake:\n%s", out)
	}
	installed, err := pluginpkg.LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	if p := installed.Packages[0]; p.Manifest.Version.String() != "1.4.0" || p.Digest != good || p.Bake != nil || p.Origin != goodOrigin {
		t.Errorf("home after the return: %s digest %s origin %s bake %+v, want digest %s origin %s",
			p.Manifest.Version, p.Digest, p.Origin, p.Bake, good, goodOrigin)
	}
}
