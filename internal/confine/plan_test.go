package confine

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

// TestPlanDNS: only a connect entry naming a host allows DNS (UDP and TCP
// port 53), as docs/manifest.md says; "*" and an IP address name none, so
// that "*:PORT", alone or beside an address on the same port, is TCP to
// that port and nothing else: what "require" can enforce from Landlock
// ABI 4, where UDP by port needs ABI 10.
func TestPlanDNS(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		connect  []string
		udp      bool
		tcp      []uint16
		hostOnly bool // a rule "any host on port N" is not enforced
	}{
		{connect: []string{"*:443"}, tcp: []uint16{443}},
		{connect: []string{"127.0.0.1:8080", "*:8080"}, tcp: []uint16{8080}},
		{connect: []string{"[::1]:8080"}, tcp: []uint16{8080}, hostOnly: true},
		{connect: []string{"api.example.com:443", "*:443"}, udp: true, tcp: []uint16{53, 443}},
		{connect: []string{"api.example.com:443"}, udp: true, tcp: []uint16{53, 443}, hostOnly: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.connect, " "), func(t *testing.T) {
			p, r, err := Plan(Spec{Mode: pluginpkg.ConfineBestEffort, Command: self,
				Requested: &pluginpkg.Permissions{Connect: tt.connect}, Vars: Vars{Package: t.TempDir()}})
			if err != nil {
				t.Fatal(err)
			}
			if p.UDP != tt.udp || !slices.Equal(p.TCPConnect, tt.tcp) {
				t.Errorf("UDP %v, TCP %v; want UDP %v, TCP %v", p.UDP, p.TCPConnect, tt.udp, tt.tcp)
			}
			if udp := slices.Equal(p.UDPPorts, []uint16{53}); udp != tt.udp {
				t.Errorf("UDP ports %v, want port 53 only with DNS", p.UDPPorts)
			}
			hostOnly := strings.Contains(strings.Join(r.NotEnforced, "\n"), "any host on port")
			if hostOnly != tt.hostOnly {
				t.Errorf("not enforced: %q; want a host-only rule: %v", r.NotEnforced, tt.hostOnly)
			}
		})
	}
}
