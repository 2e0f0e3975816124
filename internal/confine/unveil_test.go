package confine

import (
	"fmt"
	"testing"
)

// TestUnveilAndPledge: the unveil calls and pledge promises of OpenBSD's
// confinement, from the widest permission last, and promises only for
// what the policy allows.
func TestUnveilAndPledge(t *testing.T) {
	p := &Policy{Read: []string{"/pkg", "/usr/lib"}, Write: []string{"/data"}, Exec: []string{"/pkg/run"},
		Devices: []string{"/dev/null"}}
	if got, want := fmt.Sprint(unveilRules(p)), "[{/pkg r} {/usr/lib r} {/pkg/run rx} {/dev/null rw} {/data rwc}]"; got != want {
		t.Errorf("unveil rules %s, want %s", got, want)
	}
	for _, c := range []struct {
		p    Policy
		want string
	}{
		{Policy{}, "stdio rpath wpath cpath dpath fattr flock prot_exec"},
		{Policy{TCPConnect: []uint16{443}}, "stdio rpath wpath cpath dpath fattr flock prot_exec inet"},
		{Policy{TCPConnect: []uint16{443}, UDP: true, UDPPorts: []uint16{53}}, "stdio rpath wpath cpath dpath fattr flock prot_exec inet dns"},
		{Policy{Children: true}, "stdio rpath wpath cpath dpath fattr flock prot_exec proc exec"},
	} {
		if got := pledgePromises(&c.p); got != c.want {
			t.Errorf("pledgePromises(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}
