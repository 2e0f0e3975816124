package confine

import (
	"fmt"
	"path/filepath"
	"strings"
)

// sandboxExec is macOS's command that applies a Seatbelt profile to
// itself and then executes the command it is given.
const sandboxExec = "/usr/bin/sandbox-exec"

// seatbeltProfile returns the Seatbelt profile (SBPL) that confines a
// plugin to p on macOS: everything denied, then the policy's files
// (Read: read; Write: read and write; Exec: read and execute; Devices:
// read and write), the metadata of the directories above them (so that a
// path can be resolved), TCP to p's ports and UDP to p's UDP ports on any
// host, the DNS resolver's socket when UDP is allowed, and signals and
// process information only within the plugin's own sandbox (its
// children). resolve maps each path to the one the kernel sees (macOS's
// /tmp is /private/tmp): the profile matches resolved paths. No listening
// socket is allowed: Seatbelt's default denies network-bind and
// network-inbound.
func seatbeltProfile(p *Policy, resolve func(string) string) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-fork)\n")
	b.WriteString("(allow signal (target same-sandbox))\n")
	b.WriteString("(allow process-info* (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n")
	b.WriteString("(allow ipc-posix-shm-read-data (ipc-posix-name \"apple.shm.notification_center\"))\n")
	rule := func(what string, filter string, paths []string) {
		if len(paths) == 0 {
			return
		}
		fmt.Fprintf(&b, "(allow %s", what)
		for _, path := range paths {
			fmt.Fprintf(&b, "\n  (%s %s)", filter, sbplString(resolve(path)))
		}
		b.WriteString(")\n")
	}
	rule("file-read*", "subpath", p.Read)
	rule("file-read* file-write*", "subpath", p.Write)
	rule("file-read* file-write-data file-ioctl", "literal", p.Devices)
	rule("file-read* process-exec", "literal", p.Exec)
	rule("file-read-metadata", "literal", ancestors(p, resolve))
	if len(p.TCPConnect) > 0 || p.UDP {
		b.WriteString("(allow system-socket)\n")
	}
	for _, port := range p.TCPConnect {
		fmt.Fprintf(&b, "(allow network-outbound (remote tcp \"*:%d\"))\n", port)
	}
	for _, port := range p.UDPPorts {
		fmt.Fprintf(&b, "(allow network-outbound (remote udp \"*:%d\"))\n", port)
	}
	if p.UDP {
		// getaddrinfo asks mDNSResponder, through its UNIX socket.
		b.WriteString("(allow network-outbound (literal \"/private/var/run/mDNSResponder\"))\n")
		b.WriteString("(allow mach-lookup (global-name \"com.apple.dnssd.service\"))\n")
	}
	return b.String()
}

// ancestors returns the directories above every path of p, resolved,
// sorted and without duplicates, "/" included.
func ancestors(p *Policy, resolve func(string) string) []string {
	seen := map[string]bool{"/": true}
	out := []string{"/"}
	for _, l := range [][]string{p.Read, p.Write, p.Exec, p.Devices} {
		for _, path := range l {
			for d := filepath.Dir(resolve(path)); d != "/" && d != "." && !seen[d]; d = filepath.Dir(d) {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	q := &Policy{Read: out}
	q.normalize()
	return q.Read
}

// sbplString quotes s as an SBPL string literal.
func sbplString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
