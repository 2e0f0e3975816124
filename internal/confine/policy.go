package confine

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Policy is what Start confines a plugin to: absolute paths and ports,
// nothing left to resolve.
type Policy struct {
	// Read and Write are the hierarchies the plugin may read, and write
	// and read; Exec the files it may execute (and read); Devices the
	// device files it may read and write.
	Read    []string `json:"read,omitempty"`
	Write   []string `json:"write,omitempty"`
	Exec    []string `json:"exec,omitempty"`
	Devices []string `json:"devices,omitempty"`
	// TCPConnect are the TCP ports it may connect to; empty, and UDP
	// false, means no network socket at all.
	TCPConnect []uint16 `json:"tcp_connect,omitempty"`
	// UDP allows UDP sockets (for DNS, which needs port 53); where
	// Landlock restricts UDP, only to UDPPorts.
	UDP      bool     `json:"udp,omitempty"`
	UDPPorts []uint16 `json:"udp_ports,omitempty"`
	// ABI is the Landlock ABI the policy was planned for: Start refuses
	// to apply it with less (a policy is never applied weaker than its
	// Report says).
	ABI int `json:"abi"`
	// Children says the plugin may start programs other than its own
	// command (its permissions' exec is not empty): on OpenBSD it is
	// pledged "proc exec" then, and not otherwise.
	Children bool `json:"children,omitempty"`
}

// normalize sorts every list and drops duplicates and empty entries.
func (p *Policy) normalize() {
	for _, l := range []*[]string{&p.Read, &p.Write, &p.Exec, &p.Devices} {
		*l = slices.DeleteFunc(*l, func(s string) bool { return s == "" })
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	for _, l := range []*[]uint16{&p.TCPConnect, &p.UDPPorts} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
}

// Report says what a plugin's confinement is and what this machine
// enforces of it: the permissions requested, granted, denied and the
// effective result, variables expanded in the last; what is enforced and
// by what; what is not; and notes on entries left out.
type Report struct {
	Mode                         string
	Requested, Granted, Denied   *pluginpkg.Permissions
	Effective                    *pluginpkg.Permissions
	Mechanism                    string // e.g. "landlock ABI 7, seccomp, no_new_privs"
	ABI                          int    // the Landlock ABI found; 0 for none
	Enforced, NotEnforced, Notes []string

	hostOnly []string // connect entries enforced as their port only
}

// String summarizes the report on one line: the mode, the mechanism and
// what is not enforced.
func (r *Report) String() string {
	if r == nil || r.Mode == pluginpkg.ConfineOff {
		return pluginpkg.ConfineOff
	}
	s := r.Mode + ": " + r.Mechanism
	if len(r.NotEnforced) > 0 {
		s += "; not enforced: " + strings.Join(r.NotEnforced, "; ")
	}
	return s
}

// ports formats ports as "443, 8443".
func ports(ps []uint16) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}

// setIDFiles reports each of files that is set-user-ID or set-group-ID:
// it would run with its owner's rights.
func setIDFiles(files []string) []string {
	var out []string
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
			out = append(out, fmt.Sprintf("exec %s: a set-id file runs with its owner's rights", f))
		}
	}
	return out
}
