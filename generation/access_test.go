package generation

import (
	"testing"

	"github.com/extkernel/extkernel/internal/access"
)

// TestClientAccessorsNeedToken holds that the client accessors, which would
// let a caller skip the kernel's leases, refuse a caller without the
// module's token (a zero Token is all a host can make, by reflection).
func TestClientAccessorsNeedToken(t *testing.T) {
	g := &Generation{byName: map[string]*Member{"p": {}}, members: []*Member{{}}}
	tests := []struct {
		name string
		call func(access.Token)
	}{
		{"Member.Client", func(tok access.Token) { g.members[0].Client(tok) }},
		{"Generation.Client", func(tok access.Token) { g.Client(tok, "p") }},
		{"Generation.Clients", func(tok access.Token) { g.Clients(tok) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.call(access.Grant) // must not panic
			defer func() {
				if recover() == nil {
					t.Error("no panic without the token")
				}
			}()
			tt.call(access.Token{})
		})
	}
}
