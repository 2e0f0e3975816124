//go:build darwin

package confine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// systemRead lists what every process may need to read to run on macOS:
// the system's libraries and frameworks and the dyld shared cache (under
// /System and /usr/lib), data under /usr/share, the files under
// /private/etc a C library or runtime reads (name resolution, users and
// groups, TLS roots), the time zone database and the locale. Program
// directories (/bin, /sbin, /usr/bin, /usr/sbin, /usr/libexec) are left
// out, as on Linux. docs/security.md lists the same.
var systemRead = []string{
	"/System", "/usr/lib", "/usr/share", "/Library/Apple/System/Library", "/Library/Preferences/Logging",
	"/private/etc/hosts", "/private/etc/resolv.conf", "/private/var/run/resolv.conf", "/private/etc/services",
	"/private/etc/protocols", "/private/etc/passwd", "/private/etc/group", "/private/etc/ssl",
	"/private/etc/localtime", "/private/var/db/timezone", "/private/var/db/dyld",
}

// systemDeviceFiles are the device files every process may read and write.
var systemDeviceFiles = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/dtracehelper"}

// systemReadable returns the entries of systemRead that exist here.
func systemReadable() []string { return existing(systemRead) }

// systemDevices returns the entries of systemDeviceFiles that exist here.
func systemDevices() []string { return existing(systemDeviceFiles) }

// existing returns the paths that exist.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// interpreterHome returns the installation an executable in a "bin"
// directory belongs to (Homebrew's /opt/homebrew/Cellar/python@3.12/3.12.1
// for its python3.12), which its runtime reads its standard library from;
// "" for one under /usr, or in no "bin" directory.
func interpreterHome(exe string) string {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "bin" {
		return ""
	}
	home := filepath.Dir(dir)
	if home == "/" || home == "/usr" || strings.Count(home, "/") < 2 {
		return ""
	}
	return home
}

// enforce records what Seatbelt enforces of p: files, TCP and UDP by port
// (not by host), no listening, signals and process information within
// the plugin's own processes. macOS has no no_new_privs: a setuid or
// setgid file the policy lets the plugin execute runs with its owner's
// privileges, which is reported as not enforced.
func enforce(p *Policy, r *Report) {
	if _, err := os.Stat(sandboxExec); err != nil {
		r.Mechanism = "none"
		r.NotEnforced = append(r.NotEnforced, fmt.Sprintf("every rule: %s is missing (%v)", sandboxExec, err))
		return
	}
	r.Mechanism = "seatbelt (sandbox-exec)"
	r.Enforced = append(r.Enforced,
		fmt.Sprintf("files: read %d, write %d, execute %d hierarchies or files, nothing else (Seatbelt)",
			len(p.Read)+len(p.Devices), len(p.Write)+len(p.Devices), len(p.Exec)),
		"no listening socket; signals and process information reach only the plugin's own processes (Seatbelt)")
	switch {
	case len(p.TCPConnect) == 0 && !p.UDP:
		r.Enforced = append(r.Enforced, "no network (Seatbelt)")
	default:
		if len(p.TCPConnect) > 0 {
			r.Enforced = append(r.Enforced, fmt.Sprintf("TCP: connect to ports %s only (Seatbelt)", ports(p.TCPConnect)))
		}
		if p.UDP {
			r.Enforced = append(r.Enforced, fmt.Sprintf("UDP: to port %s only, for DNS (Seatbelt)", ports(p.UDPPorts)))
		}
	}
	r.NotEnforced = append(r.NotEnforced, r.hostOnly...)
	r.NotEnforced = append(r.NotEnforced, setIDFiles(p.Exec)...) // macOS has no no_new_privs
}

// Start runs start, which executes sandbox-exec (Command): the profile
// applies from the plugin's first instruction, and nothing of the host is
// restricted.
func Start(_ *Policy, start func() error) error { return start() }

// Command returns the command line that runs path with args confined to
// p: sandbox-exec with p's profile, then the plugin (args[0] dropped:
// sandbox-exec passes path as the plugin's argv[0]).
func Command(p *Policy, path string, args []string) (string, []string) {
	profile := seatbeltProfile(p, func(s string) string {
		if r, err := filepath.EvalSymlinks(s); err == nil {
			return r
		}
		return s
	})
	argv := append([]string{sandboxExec, "-p", profile, path}, args[min(1, len(args)):]...)
	return sandboxExec, argv
}
