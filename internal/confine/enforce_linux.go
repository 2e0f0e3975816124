//go:build linux

package confine

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	seccomp "github.com/elastic/go-seccomp-bpf"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// The Landlock ABIs that enforce what a policy may say.
const (
	abiTruncate = 3  // truncate(2) of a file granted for reading only
	abiTCP      = 4  // TCP connect and bind by port
	abiScopes   = 6  // signals and abstract UNIX sockets scoped to the domain
	abiUDP      = 10 // UDP by port
	newestABI   = 11 // the newest go-landlock knows
)

// landlockABI returns the Landlock ABI of the running kernel, 0 for none,
// capped at the newest go-landlock knows, and at abiCap when a test set it.
func landlockABI() int {
	v := kernelABI()
	if c := abiCap.Load(); c > 0 {
		v = min(v, int(c)-1)
	}
	return v
}

// kernelABI probes the kernel's Landlock ABI once per host process (it
// cannot change while the kernel runs), the way go-landlock does: a
// kernel reporting ABI 6 or later without the fix of the signal-scoping
// erratum counts as ABI 5, whose rules go-landlock then applies.
var kernelABI = sync.OnceValue(func() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	if v >= abiScopes {
		if errata, err := ll.LandlockGetErrata(); err != nil || errata&errataSignalScope == 0 {
			v = abiScopes - 1
		}
	}
	return min(v, newestABI)
})

// errataSignalScope is the Landlock erratum bit of the signal-scoping fix
// (Linux 6.12 stable), without which go-landlock treats the kernel as ABI 5.
const errataSignalScope = 0x2

// seccompSupported reports, once per host process, whether the kernel
// has seccomp filters.
var seccompSupported = sync.OnceValue(seccomp.Supported)

// abiCap is the ABI SimulateLandlockABI caps landlockABI at, plus one; 0
// (never set outside tests) means no cap.
var abiCap atomic.Int32

// SimulateLandlockABI makes this process plan as if the kernel had at most
// Landlock ABI abi (0 for none), until restore is called: for tests only,
// which check what "require" refuses and "best-effort" reports on older
// kernels. Plan's Report and Policy then say abi, and Start applies the
// Policy with abi's rights only, as such a kernel would.
func SimulateLandlockABI(abi int) (restore func()) {
	prev := abiCap.Swap(int32(abi) + 1)
	return func() { abiCap.Store(prev) }
}

// enforce records in r what this machine enforces of p, and sets the ABI
// p is applied with.
func enforce(p *Policy, r *Report) {
	abi := landlockABI()
	p.ABI, r.ABI = abi, abi
	sc := seccompSupported()
	var mech []string
	need := func(ok bool, what string) {
		if !ok {
			r.NotEnforced = append(r.NotEnforced, what)
		}
	}
	if abi > 0 {
		mech = append(mech, fmt.Sprintf("landlock ABI %d", abi))
		r.Enforced = append(r.Enforced, fmt.Sprintf("files: read %d, write %d, execute %d hierarchies or files, nothing else (Landlock)",
			len(p.Read)+len(p.Devices), len(p.Write)+len(p.Devices), len(p.Exec)))
	}
	need(abi > 0, "files: Landlock is not available (a kernel before 5.13, or landlock missing from its lsm= list)")
	need(abi == 0 || abi >= abiTruncate, fmt.Sprintf("truncating a file granted for reading only (Landlock ABI %d needed, this kernel has %d)", abiTruncate, abi))
	if sc {
		mech = append(mech, "seccomp")
		r.Enforced = append(r.Enforced, "no UNIX, raw, packet or Multipath TCP sockets, no listening, no memfd that can be executed; no ptrace, namespaces, io_uring, BPF, keyrings or kernel modules (seccomp)")
	}
	need(sc, "sockets other than TCP, ptrace, namespaces, io_uring, BPF, keyrings, kernel modules: seccomp is not available")
	switch {
	case len(p.TCPConnect) == 0 && !p.UDP:
		if sc {
			r.Enforced = append(r.Enforced, "no network: no IPv4 or IPv6 socket (seccomp)")
		}
	default:
		need(abi >= abiTCP, fmt.Sprintf("TCP connections restricted to ports %s (Landlock ABI %d needed, this kernel has %d)", ports(p.TCPConnect), abiTCP, abi))
		if abi >= abiTCP {
			r.Enforced = append(r.Enforced, fmt.Sprintf("TCP: connect to ports %s only, no listening (Landlock)", ports(p.TCPConnect)))
		}
		if p.UDP {
			need(abi >= abiUDP, fmt.Sprintf("UDP restricted to port %s for DNS (Landlock ABI %d needed, this kernel has %d: any UDP port is reachable)", ports(p.UDPPorts), abiUDP, abi))
		} else if sc {
			r.Enforced = append(r.Enforced, "no UDP (seccomp)")
		}
	}
	r.NotEnforced = append(r.NotEnforced, r.hostOnly...)
	need(abi >= abiScopes, fmt.Sprintf("signals to processes outside the plugin's sandbox (Landlock ABI %d needed, this kernel has %d)", abiScopes, abi))
	if abi >= abiScopes {
		r.Enforced = append(r.Enforced, "signals and abstract UNIX sockets reach only the plugin's own processes (Landlock)")
	}
	mech = append(mech, "no_new_privs")
	r.Enforced = append(r.Enforced, "no new privileges: setuid and file capabilities do not apply")
	if os.Geteuid() == 0 {
		r.Enforced = append(r.Enforced, "no capabilities, none regained at exec (the host runs as root; securebits noroot, locked)")
	}
	r.Mechanism = strings.Join(mech, ", ")
}
