//go:build !windows

package sdktest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// TestDenials holds what the suite says of a confined plugin's error
// text, in each language's own words (the texts are what Go, Python 3.11,
// Node.js 22 and bash wrote under Landlock and seccomp on Linux), against
// permissions that read /pkg and /ws, write /data and connect to port
// 443 of any host.
func TestDenials(t *testing.T) {
	d := &denials{
		eff: &pluginpkg.Permissions{Read: []string{"/ws"}, Write: []string{"/data"}, Connect: []string{"*:443"}, Exec: []string{"git"}},
		dir: "/pkg", system: []string{"/pkg", "/ws", "/usr/lib", "/usr/bin/git"},
	}
	exe := filepath.Join(t.TempDir(), "pyenv")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const (
		readKey = "denied: read /home/u/.ssh/id_ed25519 (not in permissions.fs.read)"
		writeWS = "denied: write /ws/out (not in permissions.fs.write)"
		connect = "denied: connect 10.0.0.1:22 (not in permissions.net.connect)"
	)
	tests := []struct {
		name, text string
		want       []string
	}{
		{"go read", `open /home/u/.ssh/id_ed25519: permission denied`, []string{readKey}},
		{"go write readable", `open /ws/out: permission denied`, []string{writeWS}},
		{"go mkdir", `mkdir /etc/x: permission denied`, []string{"denied: write /etc/x (not in permissions.fs.write)"}},
		{"go relative", `open secret/key: permission denied`, []string{"denied: write /pkg/secret/key (not in permissions.fs.write)"}},
		{"go exec", `fork/exec /bin/sh: permission denied`, []string{"denied: exec /bin/sh (not in permissions.exec)"}},
		{"go dial", `Get "http://10.0.0.1:22/": dial tcp 10.0.0.1:22: connect: permission denied`, []string{connect}},
		{"go dial granted port", `dial tcp 10.0.0.1:443: connect: permission denied`, nil},
		{"go socket", `dial udp 10.0.0.1:53: socket: operation not permitted`, []string{"denied: connect 10.0.0.1:53 (not in permissions.net.connect)"}},
		{"go listen", `listen tcp 127.0.0.1:0: bind: permission denied`, []string{"denied: listen 127.0.0.1:0 (a confined plugin may not listen)"}},
		{"go listen unbound", `listen tcp :0: listen: operation not permitted`, []string{"denied: listen :0 (a confined plugin may not listen)"}},
		{"python read", `PermissionError: [Errno 13] Permission denied: '/home/u/.ssh/id_ed25519'`, []string{readKey}},
		{"python socket", `PermissionError: [Errno 1] Operation not permitted`,
			[]string{"denied: an operation the error does not name, maybe a connection outside permissions.net.connect (*:443)"}},
		{"node read", `Error: EACCES: permission denied, open '/home/u/.ssh/id_ed25519'`, []string{readKey}},
		{"node mkdir", `Error: EPERM: operation not permitted, mkdir '/ws/out'`, []string{writeWS}},
		{"node connect", `Error: connect EPERM 10.0.0.1:22 - Local (undefined:undefined)`, []string{connect}},
		{"node spawnSync", `Error: spawnSync /bin/sh EACCES`, []string{"denied: exec /bin/sh (not in permissions.exec)"}},
		{"node spawn granted", `Error: spawn git EACCES`, nil},
		{"bash", `/u/.pyenv/shims/python3: line 12: /nonexistent/libexec/pyenv: Permission denied`,
			[]string{"denied: read /nonexistent/libexec/pyenv (not in permissions.fs.read)"}},
		{"bash, an executable", `/u/.pyenv/shims/python3: line 12: ` + exe + `: Permission denied`,
			[]string{"denied: read or exec " + exe + " (in neither permissions.fs.read nor permissions.exec)"}},
		{"coreutils", `cat: '/home/u/.ssh/id_ed25519': Permission denied`, []string{readKey}},
		{"a system file's own mode", `open /usr/lib/private: permission denied`, nil},
		{"written data", `open /data/x: permission denied`, nil},
		{"twice", "open /home/u/.ssh/id_ed25519: permission denied\nopen /home/u/.ssh/id_ed25519: permission denied", []string{readKey}},
		{"nothing", `connection refused; no such file or directory`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := d.scan(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("scan(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
		})
	}
	if all := d.all(); !slices.IsSorted(all) || !slices.Contains(all, readKey) || len(all) > maxDenials {
		t.Errorf("all() = %q", all)
	}
	var none *denials
	if none.scan("open /x: permission denied") != nil || none.all() != nil {
		t.Error("an unconfined run found denials")
	}
}

// TestWithDenials checks that a failed case's reason ends with the run's
// denials it does not say already, and that other cases are left alone.
func TestWithDenials(t *testing.T) {
	denied := []string{"denied: read /x (not in permissions.fs.read)", "denied: exec /bin/sh (not in permissions.exec)"}
	c := withDenials(Case{Name: "handshake", Status: Fail, Reason: "exited; denied: read /x (not in permissions.fs.read)"}, denied)
	if want := "exited; denied: read /x (not in permissions.fs.read); denied: exec /bin/sh (not in permissions.exec)"; c.Reason != want {
		t.Errorf("reason = %q, want %q", c.Reason, want)
	}
	if c := withDenials(Case{Status: Pass, Reason: "ok"}, denied); c.Reason != "ok" {
		t.Errorf("a passed case's reason = %q", c.Reason)
	}
}
