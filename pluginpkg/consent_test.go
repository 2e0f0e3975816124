package pluginpkg

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWidening(t *testing.T) {
	accepted := &Permissions{
		Read:    []string{"${workspace}", "/etc/gitconfig"},
		Write:   []string{"${data}", "/var/cache/tool"},
		Connect: []string{"*:443", "api.example.com:80", "[2001:db8::1]:22"},
		Exec:    []string{"git", "${package}/bin/helper"},
	}
	tests := []struct {
		name     string
		asked    *Permissions
		accepted *Permissions
		want     []string
	}{
		{name: "nothing asked", asked: nil, accepted: nil},
		{name: "empty asked", asked: &Permissions{}, accepted: nil},
		{name: "nothing accepted", asked: &Permissions{Read: []string{"/a"}, Exec: []string{"sh"}}, accepted: nil,
			want: []string{"fs.read /a", "exec sh"}},
		{name: "the same", asked: accepted.Clone(), accepted: accepted},
		{name: "narrower", asked: &Permissions{Read: []string{"${workspace}"}, Connect: []string{"*:443"}}, accepted: accepted},
		{name: "read beneath an accepted read", asked: &Permissions{Read: []string{"${workspace}/src", "${workspace}/a/b"}}, accepted: accepted},
		{name: "read beneath an accepted write", asked: &Permissions{Read: []string{"${data}/cache"}}, accepted: accepted},
		{name: "write beneath an accepted write", asked: &Permissions{Write: []string{"${data}/db", "/var/cache/tool/x"}}, accepted: accepted},
		{name: "write where only reading was accepted", asked: &Permissions{Write: []string{"${workspace}", "/etc/gitconfig"}}, accepted: accepted,
			want: []string{"fs.write ${workspace}", "fs.write /etc/gitconfig"}},
		{name: "a sibling is not beneath", asked: &Permissions{Read: []string{"${workspace}2", "/etc/gitconfig.d", "/etc"}}, accepted: accepted,
			want: []string{"fs.read ${workspace}2", "fs.read /etc/gitconfig.d", "fs.read /etc"}},
		{name: "a variable covers only itself", asked: &Permissions{Read: []string{"${tmp}/x", "/home/u/ws"}}, accepted: accepted,
			want: []string{"fs.read ${tmp}/x", "fs.read /home/u/ws"}},
		{name: "root covers every absolute path", asked: &Permissions{Read: []string{"/etc/x", "/"}}, accepted: &Permissions{Read: []string{"/"}}},
		{name: "*:443 covers a host on 443", asked: &Permissions{Connect: []string{"api.example.com:443", "10.0.0.1:443", "*:443"}}, accepted: accepted},
		{name: "host compared without case", asked: &Permissions{Connect: []string{"API.Example.com:80"}}, accepted: accepted},
		{name: "new address", asked: &Permissions{Connect: []string{"api.example.com:8443", "other.example.com:80", "*:80", "[2001:db8::1]:22"}},
			accepted: accepted, want: []string{"net.connect api.example.com:8443", "net.connect other.example.com:80", "net.connect *:80"}},
		{name: "a host does not cover *", asked: &Permissions{Connect: []string{"*:80"}}, accepted: &Permissions{Connect: []string{"a.example:80"}},
			want: []string{"net.connect *:80"}},
		{name: "new exec", asked: &Permissions{Exec: []string{"git", "sh", "${package}/bin/helper", "${package}/bin/other"}}, accepted: accepted,
			want: []string{"exec sh", "exec ${package}/bin/other"}},
		{name: "exec is not a hierarchy", asked: &Permissions{Exec: []string{"/usr/bin/git"}}, accepted: &Permissions{Exec: []string{"/usr/bin"}},
			want: []string{"exec /usr/bin/git"}},
		{name: "minimal gains a block", asked: &Permissions{Read: []string{"${package}"}, Write: []string{"${data}"}, Connect: []string{"api.example.com:443"}},
			accepted: MinimalPermissions(), want: []string{"net.connect api.example.com:443"}},
		{name: "minimal to minimal", asked: MinimalPermissions(), accepted: MinimalPermissions()},
		{name: "schema order", asked: &Permissions{Exec: []string{"sh"}, Connect: []string{"*:1"}, Write: []string{"/w"}, Read: []string{"/r"}},
			accepted: &Permissions{}, want: []string{"fs.read /r", "fs.write /w", "net.connect *:1", "exec sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.asked.Widening(tt.accepted); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Widening = %q, want %q", got, tt.want)
			}
		})
	}
}

// permEntries is pkgEntries with a manifest asking for perms (a JSON
// object, "" for none).
func permEntries(version, perms string) []testEntry {
	e := pkgEntries("demo", version)
	m := `{"format":1,"name":"demo","version":"` + version + `","runtime":{"command":"./bin/run"}`
	if perms != "" {
		m += `,"permissions":` + perms
	}
	e[0].body = m + "}"
	return e
}

// TestUpgradeConsent walks a package through the consent rules: a first
// install accepts, an upgrade asking for more is refused (and previewed
// refused) without AcceptPermissions and writes nothing, one asking for
// the same or less keeps the acceptance, AcceptPermissions records the
// new one.
func TestUpgradeConsent(t *testing.T) {
	home := t.TempDir()
	src := func(version, perms string) string { return writeDir(t, permEntries(version, perms)) }
	accepted := func() *Permissions { t.Helper(); return stateOf(t, home, "demo").Accepted }
	if _, err := InstallSource(home, src("1.0.0", ""), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := accepted(); !reflect.DeepEqual(got, MinimalPermissions()) {
		t.Errorf("a first install accepted %+v, want the minimal set", got)
	}

	wide := src("2.0.0", `{"fs":{"read":["${package}"],"write":["${data}/db"]},"net":{"connect":["api.example.com:443"]},"exec":["git"]}`)
	before := snapshotTree(t, home)
	want := &PermissionsWidenedError{Package: "demo", From: "1.0.0", To: "2.0.0", Added: []string{"net.connect api.example.com:443", "exec git"}}
	_, err := InstallSource(home, wide, InstallOptions{Upgrade: true})
	var pe *PermissionsWidenedError
	if !errors.As(err, &pe) || !reflect.DeepEqual(pe, want) ||
		err.Error() != `package "demo": version 2.0.0 asks for permissions not accepted: + net.connect api.example.com:443; + exec git` {
		t.Errorf("upgrade widening: %v", err)
	}
	if _, err := PreviewInstall(home, wide, InstallOptions{Upgrade: true}); !errors.As(err, &pe) || !reflect.DeepEqual(pe, want) {
		t.Errorf("preview of the upgrade widening: %v", err)
	}
	assertUnchanged(t, home, before)

	p, err := PreviewInstall(home, wide, InstallOptions{Upgrade: true, AcceptPermissions: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Result.Package.Accepted == nil || len(p.Result.Package.WidenedPermissions()) != 0 {
		t.Errorf("preview accepting: accepted %+v", p.Result.Package.Accepted)
	}
	p.Close()
	assertUnchanged(t, home, before)
	if p.Result.PermissionsAccepted == nil || !reflect.DeepEqual(p.Result.PermissionsAccepted, want.Added) {
		t.Errorf("preview accepting: PermissionsAccepted %q", p.Result.PermissionsAccepted)
	}
	res, err := InstallSource(home, wide, InstallOptions{Upgrade: true, AcceptPermissions: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.PermissionsAccepted, want.Added) {
		t.Errorf("PermissionsAccepted %q, want %q", res.PermissionsAccepted, want.Added)
	}
	wideAsked := &Permissions{Read: []string{"${package}"}, Write: []string{"${data}/db"}, Connect: []string{"api.example.com:443"}, Exec: []string{"git"}}
	if got := accepted(); !reflect.DeepEqual(got, wideAsked) {
		t.Errorf("accepted after --accept-permissions: %+v", got)
	}

	// Narrowing is always fine, and keeps what was accepted.
	if _, err := InstallSource(home, src("3.0.0", `{"net":{"connect":["api.example.com:443"]}}`), InstallOptions{Upgrade: true}); err != nil {
		t.Errorf("narrowing upgrade: %v", err)
	}
	if got := accepted(); !reflect.DeepEqual(got, wideAsked) {
		t.Errorf("accepted after a narrowing upgrade: %+v", got)
	}
	// Back within what was accepted: no question asked.
	if _, err := InstallSource(home, src("4.0.0", `{"fs":{"write":["${data}/db/x"]},"exec":["git"]}`), InstallOptions{Upgrade: true}); err != nil {
		t.Errorf("upgrade within the accepted: %v", err)
	}
}

// TestConsentWithoutRecord: a package installed before acceptances were
// recorded counts as having accepted what its installed manifest asks
// for, which an upgrade then records.
func TestConsentWithoutRecord(t *testing.T) {
	home := t.TempDir()
	perms := `{"net":{"connect":["*:443"]}}`
	if _, err := InstallSource(home, writeDir(t, permEntries("1.0.0", perms)), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, home, StateFile, `{"format":1,"packages":{"demo":{"enabled":true}}}`)
	inst, err := LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	if p := inst.Packages[0]; p.Accepted != nil || p.WidenedPermissions() != nil {
		t.Errorf("no record: Accepted %+v, widened %q", p.Accepted, p.WidenedPermissions())
	}
	_, err = InstallSource(home, writeDir(t, permEntries("2.0.0", `{"net":{"connect":["*:443","*:80"]}}`)), InstallOptions{Upgrade: true})
	if err == nil || !strings.HasSuffix(err.Error(), "not accepted: + net.connect *:80") {
		t.Errorf("upgrade widening a package without a record: %v", err)
	}
	if _, err := InstallSource(home, writeDir(t, permEntries("2.0.0", `{"net":{"connect":["a.example:443"]}}`)), InstallOptions{Upgrade: true}); err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, home, "demo").Accepted; !reflect.DeepEqual(got, &Permissions{Connect: []string{"*:443"}}) {
		t.Errorf("recorded %+v, want what 1.0.0 asked for", got)
	}
}

// TestAcceptPermissions edits an installed manifest in place: the loaded
// package says what is widened, AcceptPermissions accepts it.
func TestAcceptPermissions(t *testing.T) {
	home := t.TempDir()
	if _, err := InstallSource(home, writeDir(t, permEntries("1.0.0", `{"net":{"connect":["*:443"]}}`)), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, home, "packages/demo/plugin.json",
		`{"format":1,"name":"demo","version":"1.0.0","runtime":{"command":"./bin/run"},"permissions":{"net":{"connect":["*:443","smtp.example.com:25"]},"exec":["sh"]}}`)
	inst, err := LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	if got := inst.Packages[0].WidenedPermissions(); !reflect.DeepEqual(got, []string{"net.connect smtp.example.com:25", "exec sh"}) {
		t.Errorf("widened %q", got)
	}
	added, err := AcceptPermissions(home, "demo")
	if err != nil || !reflect.DeepEqual(added, []string{"net.connect smtp.example.com:25", "exec sh"}) {
		t.Errorf("AcceptPermissions = %q, %v", added, err)
	}
	if inst, _ = LoadInstalled(home); inst.Packages[0].WidenedPermissions() != nil {
		t.Errorf("widened after accepting: %q", inst.Packages[0].WidenedPermissions())
	}
	if added, err := AcceptPermissions(home, "demo"); err != nil || added != nil {
		t.Errorf("AcceptPermissions again = %q, %v", added, err)
	}
	if _, err := AcceptPermissions(home, "nosuch"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("AcceptPermissions of a package not installed: %v", err)
	}
	writeFile(t, home, "packages/demo/plugin.json", `{"format":1,"name":"demo"}`)
	if _, err := AcceptPermissions(home, "demo"); err == nil || !strings.Contains(err.Error(), "the package does not load") {
		t.Errorf("AcceptPermissions of a package that does not load: %v", err)
	}
}

func TestStateAcceptedInvalid(t *testing.T) {
	home := t.TempDir()
	writeFile(t, home, StateFile, `{"format":1,"packages":{"demo":{"accepted_permissions":{"fs":{"read":["rel"]}}}}}`)
	_, err := readState(home)
	if !errors.Is(err, ErrCorruptState) || !strings.HasSuffix(err.Error(),
		`packages["demo"].accepted_permissions.fs.read[0]: "rel": must be absolute or start with one of ${package}, ${data}, ${workspace}, ${tmp}`) {
		t.Errorf("readState: %v", err)
	}
	writeFile(t, home, StateFile, `{"format":1,"packages":{"demo":{"accepted_permissions":{"fs":{"list":[]}}}}}`)
	if _, err := readState(filepath.Join(home)); !errors.Is(err, ErrCorruptState) {
		t.Errorf("readState with an unknown key: %v", err)
	}
}
