package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// sameMachine replaces planConfinement, for the test, with the real plan
// on a machine made the same everywhere: Landlock ABI 4, which enforces
// files and TCP ports but neither the signal and abstract-socket scopes
// nor UDP. Under "require" such a plugin would not start.
func sameMachine(t *testing.T) {
	real, os := planConfinement, confineOS
	confineOS = "linux"
	planConfinement = func(cfg config.Config, p *pluginpkg.Package) (*pluginpkg.ConfinementReport, error) {
		r, err := real(cfg, p)
		if r == nil || r.Mode == pluginpkg.ConfineOff {
			return r, err
		}
		r.Mechanism, r.LandlockABI, r.Notes = "landlock ABI 4, seccomp, no_new_privs", 4, nil
		r.Enforced = []string{"files: only the effective paths (Landlock)", "no new privileges: setuid and file capabilities do not apply"}
		r.NotEnforced = []string{"signals and abstract UNIX sockets scoped to the plugin (Landlock ABI 6 needed, this kernel has 4)"}
		if len(r.Effective.Connect) > 0 {
			r.NotEnforced = append(r.NotEnforced, "UDP restricted to port 53 for DNS (Landlock ABI 10 needed, this kernel has 4)")
		}
		if r.Mode != pluginpkg.ConfineRequire {
			return r, nil
		}
		return r, &sidecar.StartError{Plugin: p.Name, Phase: "confine",
			Err: errors.New("confinement required but not enforceable on this machine: " + strings.Join(r.NotEnforced, "; "))}
	}
	t.Cleanup(func() { planConfinement, confineOS = real, os })
}

// confinedHome copies the demo home to a temporary directory with a
// config that confines its plugins: best-effort by default, kvstore
// "require", redactor "off", a grant and a deny. memory's manifest asks
// for more than the state file records as accepted. It returns the
// directory and the config's path.
func confinedHome(t *testing.T) (dir, cfgPath string) {
	t.Helper()
	buildDemo(t)
	dir = t.TempDir()
	home := filepath.Join(dir, "home")
	copyDir(t, demoHome, home)
	if err := os.RemoveAll(filepath.Join(home, "state")); err != nil {
		t.Fatal(err)
	}
	writeManifest(t, home, "memory", func(m map[string]any) {
		m["permissions"] = map[string]any{"fs": map[string]any{"read": []string{"${package}"}, "write": []string{"${data}", "${tmp}"}},
			"net": map[string]any{"connect": []string{"api.example.com:443"}}}
	})
	writeFile(t, filepath.Join(home, "state.json"), `{"format": 1, "packages": {"kvstore-next": {"enabled": false},
  "memory": {"accepted_permissions": {"fs": {"read": ["${package}"], "write": ["${data}", "${tmp}"]}}}}}`)
	cfgPath = filepath.Join(dir, "kernel.json")
	writeFile(t, cfgPath, `{"format": 1, "home": "home",
  "capabilities": [{"capability": "host.log", "version": "1.0.0"}],
  "points": ["prompt.submit", "tool.before", "tool.after"], "slots": ["context.compactor"],
  "policy": {"audit": "optional"}, "session": {"workspace": "/src/demo"},
  "confinement": {"default": "best-effort", "packages": {"kvstore": "require", "redactor": "off"},
    "grants": {"audit": {"fs": {"read": ["${workspace}"]}}},
    "denies": {"*": {"exec": ["sh"]}}}}`)
	return dir, cfgPath
}

// TestGoldenConfinement holds plan and doctor to golden files for a home
// whose plugins are confined: per plugin the mode, the permissions
// requested, granted, denied and effective, what the machine enforces and
// not, a plugin "require" would not start, and a package whose manifest
// asks for permissions not accepted (left out of the generation).
func TestGoldenConfinement(t *testing.T) {
	sameMachine(t)
	dir, cfgPath := confinedHome(t)
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"plan-confinement", []string{"plan"}, exitChanges},
		{"plan-confinement-json", []string{"plan", "--json"}, exitChanges},
		{"doctor-confinement", []string{"doctor"}, exitFailed},
		{"doctor-confinement-json", []string{"doctor", "--json"}, exitFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := kctl(append(tt.args, "--config", cfgPath)...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			out := strings.ReplaceAll(stdout, dir, "<dir>")
			checkGolden(t, tt.name, hashRE.ReplaceAll([]byte(out), []byte(`"<hash>"`)))
		})
	}
}

// TestAcceptPermissions accepts what memory's manifest asks for: the
// state file records it, and plan no longer flags it nor leaves memory
// out; a package not installed is an error.
func TestAcceptPermissions(t *testing.T) {
	sameMachine(t)
	dir, cfgPath := confinedHome(t)
	code, stdout, stderr := kctl("accept-permissions", "memory", "--config", cfgPath)
	if want := "memory: accepted + net.connect api.example.com:443\n" +
		"  the next reload applies it ('kernelctl reload', or at once under 'kernelctl run --watch')\n"; code != exitOK || stdout != want {
		t.Errorf("accept-permissions: exit %d\nstdout %q\nstderr %q", code, stdout, stderr)
	}
	want := &pluginpkg.Permissions{Read: []string{"${package}"}, Write: []string{"${data}", "${tmp}"}, Connect: []string{"api.example.com:443"}}
	if got := acceptedIn(t, filepath.Join(dir, "home"), "memory"); !reflect.DeepEqual(got, want) {
		t.Errorf("state.json accepts %+v, want %+v", got, want)
	}
	if _, stdout, _ := kctl("plan", "--config", cfgPath); strings.Contains(stdout, "widened") || strings.Contains(stdout, `"memory" would be left out`) {
		t.Errorf("plan after accepting:\n%s", stdout)
	}
	code, stdout, _ = kctl("accept-permissions", "memory", "--config", cfgPath, "--json")
	var out acceptOutput
	if err := json.Unmarshal([]byte(stdout), &out); code != exitOK || err != nil || len(out.Added) != 0 || out.Accepted == nil ||
		!reflect.DeepEqual(out.Accepted.Net.Connect, want.Connect) {
		t.Errorf("accept-permissions again --json: exit %d, %v\n%s", code, err, stdout)
	}
	code, _, stderr = kctl("accept-permissions", "nosuch", "--config", cfgPath)
	if code != exitFailed || !strings.Contains(stderr, `package "nosuch"`) || !strings.Contains(stderr, "not installed") {
		t.Errorf("accept-permissions nosuch: exit %d, stderr %q", code, stderr)
	}
}

// acceptedIn returns the permissions home's state file records as
// accepted for name.
func acceptedIn(t *testing.T, home, name string) *pluginpkg.Permissions {
	t.Helper()
	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range inst.Packages {
		if p.Name == name {
			return p.Accepted
		}
	}
	t.Fatalf("%s is not installed", name)
	return nil
}

// TestUpgradeWidensPermissions upgrades a package to a version asking for
// more permissions: refused without --accept-permissions, naming the
// package and each permission, the home untouched (--dry-run shows it,
// then refuses); with the flag, upgraded and recorded in state.json.
func TestUpgradeWidensPermissions(t *testing.T) {
	src, home := t.TempDir(), filepath.Join(t.TempDir(), "home")
	manifest := func(version, perms string) string {
		return `{"format": 1, "name": "hello", "version": "` + version + `", "runtime": {"command": "./bin/run"}, "permissions": ` + perms + "}\n"
	}
	narrow := `{"fs": {"read": ["${package}"], "write": ["${data}"]}}`
	wide := `{"fs": {"read": ["${package}"], "write": ["${data}"]}, "net": {"connect": ["api.example.com:443"]}, "exec": ["git"]}`
	for v, perms := range map[string]string{"1.0.0": narrow, "1.1.0": wide} {
		writeFile(t, filepath.Join(src, v, "plugin.json"), manifest(v, perms))
		writeFile(t, filepath.Join(src, v, "bin", "run"), "#!/bin/sh\n")
	}
	if code, _, stderr := kctl("install", filepath.Join(src, "1.0.0"), "--home", home); code != exitOK {
		t.Fatalf("install: %s", stderr)
	}
	v2 := filepath.Join(src, "1.1.0")
	refused := "kernelctl: upgrade of hello 1.0.0 -> 1.1.0 widens permissions: + net.connect api.example.com:443; + exec git; " +
		"refused without --accept-permissions (nothing was written)\n"
	normalize := func(s string) []byte { return []byte(strings.NewReplacer(home, "<home>", src, "<src>").Replace(s)) }
	before := treeSnapshot(t, home)
	for _, args := range [][]string{{"upgrade", v2}, {"install", "--upgrade", v2}, {"upgrade", "--dry-run", v2}} {
		code, stdout, stderr := kctl(append(args, "--home", home)...)
		if code != exitFailed || stderr != refused {
			t.Errorf("%v: exit %d, stderr %q; want 1, %q", args, code, stderr, refused)
		}
		if args[1] == "--dry-run" {
			checkGolden(t, "upgrade-widens-dry-run", normalize(stdout))
		} else if stdout != "" {
			t.Errorf("%v printed %q", args, stdout)
		}
	}
	if !reflect.DeepEqual(before, treeSnapshot(t, home)) {
		t.Errorf("a refused upgrade wrote to the home")
	}
	code, stdout, _ := kctl("upgrade", "--dry-run", "--accept-permissions", "--json", v2, "--home", home)
	var out installOutput
	if err := json.Unmarshal([]byte(stdout), &out); code != exitOK || err != nil || !out.PermissionsAccepted ||
		!reflect.DeepEqual(out.WidensPermissions, []string{"net.connect api.example.com:443", "exec git"}) {
		t.Errorf("upgrade --dry-run --accept-permissions --json: exit %d, %v\n%s", code, err, stdout)
	}
	code, stdout, stderr := kctl("upgrade", "--accept-permissions", v2, "--home", home)
	if code != exitOK {
		t.Fatalf("upgrade --accept-permissions: exit %d; stderr %s", code, stderr)
	}
	checkGolden(t, "upgrade-widens-accepted", normalize(stdout))
	want := &pluginpkg.Permissions{Read: []string{"${package}"}, Write: []string{"${data}"}, Connect: []string{"api.example.com:443"}, Exec: []string{"git"}}
	if got := acceptedIn(t, home, "hello"); !reflect.DeepEqual(got, want) {
		t.Errorf("state.json accepts %+v, want %+v", got, want)
	}
}
