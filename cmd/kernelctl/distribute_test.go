package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/extkernel/extkernel/pluginpkg"
)

// kvPackage copies the demo's kvstore into a new directory as version,
// its command under runtime.platforms for this host, and returns it.
func kvPackage(t *testing.T, version string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kvstore")
	copyDir(t, filepath.Join(demoHome, "packages", "kvstore"), dir)
	manifest := `{"format": 1, "name": "kvstore", "version": "` + version + `",
  "runtime": {"platforms": {"` + pluginpkg.HostPlatform() + `": "./bin/kvstore"}},
  "provides": [{"capability": "storage.kv", "version": "1.4.0", "methods": {"get": "get", "put": "put"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kctlJSON runs kernelctl with --json, expecting exit code want, and
// decodes its output into v.
func kctlJSON(t *testing.T, want int, v any, args ...string) {
	t.Helper()
	code, out, errOut := kctl(append(args, "--json")...)
	if code != want {
		t.Fatalf("kernelctl %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("kernelctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestPackPushInstallRun: pack (twice: the same digest), push to an
// in-process registry, install by tag, run the real plugin, plan and
// upgrade from a layout directory, each showing the resolved digest that
// the state file pins as the package's origin.
func TestPackPushInstallRun(t *testing.T) {
	buildDemo(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of this machine
	host := strings.TrimPrefix(srv.URL, "http://")
	work := t.TempDir()
	v1 := kvPackage(t, "1.4.0")
	var p1, p2 packOutput
	kctlJSON(t, 0, &p1, "pack", v1, "-o", filepath.Join(work, "a.oci"))
	kctlJSON(t, 0, &p2, "pack", v1, "-o", filepath.Join(work, "b.oci"))
	if p1.Digest != p2.Digest || p1.Tag != "1.4.0" || len(p1.Platforms) != 1 {
		t.Fatalf("packs: %+v and %+v", p1, p2)
	}
	var pushed pushOutput
	kctlJSON(t, 0, &pushed, "push", p1.Layout, host+"/acme/kvstore:1.4.0", "--plain-http")
	if pushed.Digest != p1.Digest {
		t.Fatalf("pushed %s, packed %s", pushed.Digest, p1.Digest)
	}
	home := filepath.Join(work, "home")
	var inst installOutput
	kctlJSON(t, 0, &inst, "install", "oci://"+host+"/acme/kvstore:1.4.0", "--plain-http", "--home", home)
	if want := "oci://" + host + "/acme/kvstore@" + p1.Digest; inst.Origin != want || inst.SourceKind != "oci" {
		t.Fatalf("installed origin %q kind %q, want %q", inst.Origin, inst.SourceKind, want)
	}
	state, _ := os.ReadFile(filepath.Join(home, "state.json"))
	if !strings.Contains(string(state), `"origin": "oci://`+host+`/acme/kvstore@`+p1.Digest+`"`) {
		t.Errorf("state.json does not pin the origin:\n%s", state)
	}
	if code, out, errOut := kctl("run", "--home", home, "--once"); code != 0 || !strings.Contains(out, "kvstore  1.4.0  running") {
		t.Fatalf("run --once: exit %d\n%s%s", code, out, errOut)
	}
	var p3 packOutput
	kctlJSON(t, 0, &p3, "pack", kvPackage(t, "1.5.0"), "-o", filepath.Join(work, "a.oci"))
	ref := "oci-layout:" + p3.Layout + ":1.5.0"
	code, out, errOut := kctl("plan", ref, "--home", home)
	if code != exitChanges || !strings.Contains(out, "artifact oci-layout:"+p3.Layout+"@"+p3.Digest) || !strings.Contains(out, "would be upgraded 1.4.0 -> 1.5.0") {
		t.Fatalf("plan %s: exit %d\n%s%s", ref, code, out, errOut)
	}
	kctlJSON(t, 0, &inst, "upgrade", ref, "--home", home)
	if inst.Action != "upgraded" || inst.Origin != "oci-layout:"+p3.Layout+"@"+p3.Digest {
		t.Fatalf("upgrade: %+v", inst)
	}
	if code, _, errOut := kctl("install", "oci://"+host+"/acme/none:1", "--plain-http", "--home", home); code != 1 || !strings.Contains(errOut, "not found") {
		t.Errorf("install of a missing artifact: exit %d: %s", code, errOut)
	}
}

// TestSignedInstall: pack --sign-key signs the artifact; under a require
// policy in the host config, install verifies it and names the key, and
// refuses an unsigned artifact without writing anything.
func TestSignedInstall(t *testing.T) {
	buildDemo(t)
	work := t.TempDir()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	pubDER, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	os.WriteFile(filepath.Join(work, "acme.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	os.WriteFile(filepath.Join(work, "acme.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644)
	cfg := filepath.Join(work, "kernel.json")
	os.WriteFile(cfg, []byte(`{"format": 1, "home": "home",
  "signatures": [{"prefix": "oci-layout:", "policy": "require", "keys": ["acme.pub"]}]}`), 0o644)
	var signed, unsigned packOutput
	kctlJSON(t, 0, &signed, "pack", kvPackage(t, "1.4.0"), "-o", filepath.Join(work, "signed.oci"), "--sign-key", filepath.Join(work, "acme.key"))
	kctlJSON(t, 0, &unsigned, "pack", kvPackage(t, "1.5.0"), "-o", filepath.Join(work, "unsigned.oci"))
	code, out, errOut := kctl("install", unsigned.Reference, "--config", cfg)
	if code != 1 || !strings.Contains(errOut, "not signed (no signature referrer) (policy require for \"oci-layout:\" trusts key "+filepath.Join(work, "acme.pub")+")") {
		t.Fatalf("unsigned install: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(work, "home", "packages")); err == nil {
		t.Error("the refused install wrote to the home")
	}
	code, out, errOut = kctl("install", signed.Reference, "--config", cfg)
	if code != 0 || !strings.Contains(out, "  signature verified: signed by key "+filepath.Join(work, "acme.pub")) {
		t.Fatalf("signed install: exit %d\n%s%s", code, out, errOut)
	}
}

// registryHost serves an in-process OCI registry for the test and returns
// its host:port, with no docker credentials of this machine in the way.
func registryHost(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	return strings.TrimPrefix(srv.URL, "http://")
}
