//go:build linux

package sidecar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The mechanisms that stop an escape attempt, as the suite's summary names
// them (docs/security.md, "Confinement").
const (
	byFiles    = "Landlock files"
	byTruncate = "Landlock truncate (ABI 3)"
	byTCP      = "Landlock TCP ports (ABI 4)"
	byScope    = "Landlock scopes (ABI 6)"
	byUDP      = "Landlock UDP ports (ABI 10)"
	bySeccomp  = "seccomp"
	byNNP      = "no_new_privs"
)

// mechanismABI is the Landlock ABI each mechanism needs; seccomp and
// no_new_privs need none.
var mechanismABI = map[string]int{byFiles: 1, byTruncate: 3, byTCP: 4, byScope: 6, byUDP: 10}

// denials are the words, lower-cased, of the errors each mechanism
// answers: an attempt failing for any other reason (no such file, a
// refused connection) is not counted as stopped.
var denials = map[string][]string{
	byFiles:    {"permission denied", "eacces", "invalid cross-device link"},
	byTruncate: {"permission denied", "eacces"},
	byTCP:      {"permission denied", "eacces"},
	byScope:    {"operation not permitted", "eperm"},
	bySeccomp:  {"operation not permitted", "eperm"},
}

// nnpDenied is what the setuid-to-nobody binary says when its setuid bit
// is not honoured: still root, without any capability.
const nnpDenied = "ok: euid=0 caps=0000000000000000"

// escapeCase is one escape attempt of the suite: the permissions the
// plugin declares, the provider it calls and its target, the mechanism
// expected to stop it, and what must be left as it was.
type escapeCase struct {
	name   string
	perms  string
	do     string
	in     func(w *escapeWorld) escapeAttempt
	by     string
	intact func(w *escapeWorld) error  // nil: nothing outside to look at
	then   []string                    // outlive: the cases its child makes again
	needs  func(w *escapeWorld) string // why it cannot be made here; nil or "": it can
}

// escapeCases are the attempts, each as a plugin author would write it.
var escapeCases = []escapeCase{
	{name: "ssh-key", perms: permFiles, do: "steal-ssh-key", by: byFiles,
		in: none, intact: func(w *escapeWorld) error { return unchanged(filepath.Join(w.home, ".ssh", "id_ed25519"), keyText) }},
	{name: "other-package-data", perms: permFiles, do: "read", by: byFiles,
		in: func(w *escapeWorld) escapeAttempt { return escapeAttempt{Path: filepath.Join(w.otherData, "secret")} }},
	{name: "other-package-files", perms: permFiles, do: "read", by: byFiles,
		in: func(w *escapeWorld) escapeAttempt {
			return escapeAttempt{Path: filepath.Join(w.otherPkg, "credentials.json")}
		}},
	{name: "write-beside-data", perms: permFiles, do: "write", by: byFiles,
		in: func(w *escapeWorld) escapeAttempt {
			return escapeAttempt{Path: filepath.Join(w.opts.DataRoot, "escaped")}
		},
		intact: func(w *escapeWorld) error { return absent(filepath.Join(w.opts.DataRoot, "escaped")) }},
	{name: "write-home", perms: permFiles, do: "write", by: byFiles,
		in:     func(w *escapeWorld) escapeAttempt { return escapeAttempt{Path: filepath.Join(w.home, ".bashrc")} },
		intact: func(w *escapeWorld) error { return unchanged(filepath.Join(w.home, ".bashrc"), secretText) }},
	{name: "write-own-package", perms: permFiles, do: "write", by: byFiles,
		in:     func(w *escapeWorld) escapeAttempt { return escapeAttempt{Path: filepath.Join(w.pkgDir, "escaped")} },
		intact: func(w *escapeWorld) error { return absent(filepath.Join(w.pkgDir, "escaped")) }},
	{name: "rename-out-of-data", perms: permFiles, do: "rename", by: byFiles, in: lootOut, intact: lootKept},
	{name: "rename-into-data", perms: permFiles, do: "rename", by: byFiles, in: secretIn, intact: secretKept},
	{name: "link-out-of-data", perms: permFiles, do: "link", by: byFiles, in: lootOut, intact: lootKept},
	{name: "link-into-data", perms: permFiles, do: "link", by: byFiles, in: secretIn, intact: secretKept},
	{name: "symlink-in-package", perms: permFiles, do: "read", by: byFiles,
		in: func(w *escapeWorld) escapeAttempt { return escapeAttempt{Path: filepath.Join(w.pkgDir, "escape-link")} }},
	{name: "symlink-made-in-data", perms: permFiles, do: "symlink", by: byFiles,
		in: func(w *escapeWorld) escapeAttempt {
			return escapeAttempt{Path: filepath.Join(w.outside, "secret"), To: filepath.Join(w.data, "link")}
		}},
	{name: "truncate-readable-file", perms: permFiles, do: "truncate", by: byTruncate,
		in:     func(w *escapeWorld) escapeAttempt { return escapeAttempt{Path: filepath.Join(w.pkgDir, "notes.txt")} },
		intact: func(w *escapeWorld) error { return unchanged(filepath.Join(w.pkgDir, "notes.txt"), notesText) }},
	{name: "tcp-without-net", perms: permFiles, do: "dial-tcp", by: bySeccomp, in: addrOf(forbidden), intact: noHits(forbidden)},
	{name: "tcp-other-port", perms: permNet, do: "dial-tcp", by: byTCP, in: addrOf(forbidden), intact: noHits(forbidden)},
	{name: "tcp-listen", perms: permNet, do: "listen-tcp", by: byTCP, in: none},
	{name: "tcp-listen-unbound", perms: permNet, do: "listen-autobind", by: bySeccomp, in: none},
	{name: "multipath-tcp", perms: permNet, do: "mptcp", by: bySeccomp, in: addrOf(forbidden), intact: noHits(forbidden)},
	{name: "udp", perms: permNet, do: "dial-udp", by: bySeccomp, in: addrOf(udp), intact: noHits(udp)},
	{name: "dns-lookup", perms: permNet, do: "lookup-host", by: bySeccomp,
		in: func(*escapeWorld) escapeAttempt { return escapeAttempt{Path: "exfil.escape-suite.example"} }},
	{name: "dns-query", perms: permNet, do: "dns-query", by: bySeccomp, intact: noHits(udp),
		in: func(w *escapeWorld) escapeAttempt {
			return escapeAttempt{Path: "secret.exfil.example", Addr: w.udp.addr}
		}},
	{name: "udp-other-port-beside-dns", perms: permDNS, do: "dial-udp", by: byUDP, in: addrOf(udp), intact: noHits(udp)},
	{name: "admin-socket", perms: permNet, do: "dial-unix", by: bySeccomp, in: addrOf(admin), intact: noHits(admin)},
	{name: "abstract-socket", perms: permNet, do: "dial-unix", by: bySeccomp, in: addrOf(abstract), intact: noHits(abstract)},
	{name: "signal-host", perms: permFiles, do: "kill", by: byScope, // SIGURG: harmless to a Go host, were it delivered
		in: func(*escapeWorld) escapeAttempt { return escapeAttempt{PID: os.Getpid(), Signal: int(syscall.SIGURG)} }},
	{name: "kill-other-plugin", perms: permFiles, do: "kill", by: byScope, intact: targetAlive,
		in: func(w *escapeWorld) escapeAttempt {
			return escapeAttempt{PID: w.target.PID(), Signal: int(syscall.SIGKILL)}
		}},
	{name: "ptrace-host", perms: permFiles, do: "ptrace", by: bySeccomp,
		in: func(*escapeWorld) escapeAttempt { return escapeAttempt{PID: os.Getpid()} }},
	{name: "ptrace-other-plugin", perms: permFiles, do: "ptrace", by: bySeccomp, intact: targetAlive,
		in: func(w *escapeWorld) escapeAttempt { return escapeAttempt{PID: w.target.PID()} }},
	{name: "exec-shell", perms: permFiles, do: "exec", by: byFiles,
		in: func(*escapeWorld) escapeAttempt {
			return escapeAttempt{Path: "/bin/sh", Args: []string{"-c", "echo escaped"}}
		}},
	{name: "exec-copy-in-data", perms: permFiles, do: "exec-copy", by: byFiles,
		in: func(w *escapeWorld) escapeAttempt { return escapeAttempt{Path: filepath.Join(w.data, "sh")} }},
	{name: "exec-memfd", perms: permFiles, do: "exec-memfd", by: bySeccomp, in: none},
	{name: "exec-setuid", perms: permFiles, do: "exec", by: byFiles, needs: needSetuid(func(w *escapeWorld) string { return w.suid }),
		in: func(w *escapeWorld) escapeAttempt { return escapeAttempt{Path: w.suid, Args: []string{"ids"}} }},
	{name: "setuid-granted", perms: permExec, do: "exec", by: byNNP, needs: needSetuid(func(w *escapeWorld) string { return w.suidNobody }),
		in: func(w *escapeWorld) escapeAttempt { return escapeAttempt{Path: w.suidNobody, Args: []string{"ids"}} }},
	{name: "child-outlives-plugin", perms: permNet, do: "outlive", in: none,
		then: []string{"ssh-key", "other-package-data", "write-home", "tcp-other-port", "admin-socket", "signal-host", "kill-other-plugin", "exec-shell"}},
}

// needSetuid is the needs of a case that runs the setuid binary file
// returns: only root can make one.
func needSetuid(file func(*escapeWorld) string) func(*escapeWorld) string {
	return func(w *escapeWorld) string {
		if file(w) == "" {
			return "no setuid binary: the suite does not run as root"
		}
		return ""
	}
}

// none is the input of an attempt that needs no target.
func none(*escapeWorld) escapeAttempt { return escapeAttempt{} }

// Targets and checks that several cases share.
func lootOut(w *escapeWorld) escapeAttempt {
	return escapeAttempt{Path: filepath.Join(w.data, "loot"), To: filepath.Join(w.outside, "loot")}
}

func secretIn(w *escapeWorld) escapeAttempt {
	return escapeAttempt{Path: filepath.Join(w.outside, "secret"), To: filepath.Join(w.data, "stolen")}
}

func lootKept(w *escapeWorld) error {
	return errors.Join(unchanged(filepath.Join(w.data, "loot"), lootText), absent(filepath.Join(w.outside, "loot")))
}

func secretKept(w *escapeWorld) error {
	return errors.Join(unchanged(filepath.Join(w.outside, "secret"), secretText), absent(filepath.Join(w.data, "stolen")))
}

func targetAlive(w *escapeWorld) error { return w.targetAlive() }

// The listeners of the world, by what an attempt aims at.
func forbidden(w *escapeWorld) *watch { return w.forbidden }
func udp(w *escapeWorld) *watch       { return w.udp }
func admin(w *escapeWorld) *watch     { return w.admin }
func abstract(w *escapeWorld) *watch  { return w.abstract }

// addrOf aims an attempt at a listener.
func addrOf(l func(*escapeWorld) *watch) func(*escapeWorld) escapeAttempt {
	return func(w *escapeWorld) escapeAttempt { return escapeAttempt{Addr: l(w).addr} }
}

// noHits checks that nothing reached a listener.
func noHits(l func(*escapeWorld) *watch) func(*escapeWorld) error {
	return func(w *escapeWorld) error {
		if n := l(w).hits.Load(); n != 0 {
			return fmt.Errorf("%s was reached %d time(s)", l(w).addr, n)
		}
		return nil
	}
}

// unchanged checks that path still holds text.
func unchanged(path, text string) error {
	b, err := os.ReadFile(path)
	if err != nil || string(b) != text {
		return fmt.Errorf("%s changed: %q, %v", path, b, err)
	}
	return nil
}

// absent checks that nothing is at path.
func absent(path string) error {
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		return fmt.Errorf("%s exists (%v)", path, err)
	}
	return nil
}

// stopped reports whether the answer got shows the attempt stopped by
// the mechanism by: its error, or for no_new_privs a setuid bit ignored.
func stopped(by, got string) bool {
	if by == byNNP {
		return got == nnpDenied
	}
	if strings.HasPrefix(got, "ok") {
		return false
	}
	low := strings.ToLower(got)
	for _, d := range denials[by] {
		if strings.Contains(low, d) {
			return true
		}
	}
	return false
}

// caseNamed returns the case called name.
func caseNamed(name string) escapeCase {
	for _, tc := range escapeCases {
		if tc.name == name {
			return tc
		}
	}
	panic("no escape case " + name)
}

// caseABI returns the Landlock ABI a case needs enforced: its
// mechanism's, or for outlive the most any of its attempts needs.
func caseABI(tc escapeCase) int {
	n := mechanismABI[tc.by]
	for _, name := range tc.then {
		n = max(n, caseABI(caseNamed(name)))
	}
	return n
}

// mechanisms names what stops a case: for outlive, what stops each of
// its attempts.
func mechanisms(tc escapeCase) string {
	if len(tc.then) == 0 {
		return tc.by
	}
	var out []string
	for _, name := range tc.then {
		if by := caseNamed(name).by; !strings.Contains(strings.Join(out, ", "), by) {
			out = append(out, by)
		}
	}
	return strings.Join(out, ", ")
}

// TestEscapeSuite starts the hostile plugin confined, once per case,
// under "require" (or, on a kernel too old for every plugin's minimal
// set, "best-effort"), and asserts that each attempt is stopped by the
// mechanism expected and that nothing outside changed: no file read,
// written, renamed or linked, no listener reached, no process signalled
// or traced, no privilege gained, and a child that outlives the plugin
// confined as much. A case this kernel's Landlock cannot enforce is
// refused under "require" and reported by "best-effort"; the summary
// says which.
func TestEscapeSuite(t *testing.T) {
	w := newEscapeWorld(t)
	abi := w.landlockABI(t)
	rows := runEscapeSuite(t, w, abi, modeFor(abi))
	logEscapeTable(t, fmt.Sprintf("this kernel: Landlock ABI %d", abi), rows)
}
