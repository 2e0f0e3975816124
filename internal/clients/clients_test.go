package clients

import (
	"testing"

	"github.com/extkernel/extkernel/sidecar"
)

// member embeds a Holder under an unexported name, as generation.Member
// does.
type member struct {
	Name string
	held
}

type held = Holder

func TestHolder(t *testing.T) {
	m := &member{Name: "p"}
	if c := Of(m); c != nil {
		t.Fatalf("zero Holder holds %p", c)
	}
	c := new(sidecar.Client)
	Set(m, c)
	if got := Of(m); got != c {
		t.Errorf("Of = %p, want %p", got, c)
	}
	Set(m, nil)
	if got := Of(m); got != nil {
		t.Errorf("after Set(nil), Of = %p", got)
	}
}
