package kernel

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/capability"
)

// routeText is one Route as TestRoutes compares it.
func routeText(r capability.Route) string {
	return fmt.Sprintf("%s → %s %s optional=%v: provider %q methods %v handled %v", r.Plugin, r.Requirement.Key,
		r.Requirement.Constraint, r.Requirement.Optional, r.Provider, r.Methods, r.Handled)
}

// TestRoutes holds what Routes reports for each kind of route (a host
// capability with and without a handler, another plugin's provider, an
// unsatisfied optional requirement), in plugin then capability order, and
// that it reports nothing before Start and after Close.
func TestRoutes(t *testing.T) {
	memory := callerPlug("memory", nil, "storage.kv ^1.0", "host.log ^1.0", "host.bare *", "telemetry ^1.0?")
	kvstore := callerPlug("kvstore", []string{"storage.kv@1.2.0"})
	audit := callerPlug("audit", nil, "storage.kv ^1.1")
	k, err := New(callConfig(writeHome(t, memory, kvstore, audit)))
	if err != nil {
		t.Fatal(err)
	}
	if n, rs := k.Routes(); n != 0 || rs != nil {
		t.Errorf("Routes before Start = %d, %v; want 0, nil", n, rs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	n, rs := k.Routes()
	got := make([]string, len(rs))
	for i, r := range rs {
		got[i] = routeText(r)
	}
	want := []string{
		`audit → storage.kv ^1.1 optional=false: provider "kvstore" methods [get run] handled false`,
		`memory → host.bare * optional=false: provider "(host)" methods [] handled false`,
		`memory → host.log ^1.0 optional=false: provider "(host)" methods [] handled true`,
		`memory → storage.kv ^1.0 optional=false: provider "kvstore" methods [get run] handled false`,
		`memory → telemetry ^1.0 optional=true: provider "" methods [] handled false`,
	}
	if n != 1 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Routes = %d,\n%s\nwant 1,\n%s", n, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	noChildren(t)
	if n, rs := k.Routes(); n != 0 || rs != nil {
		t.Errorf("Routes after Close = %d, %v; want 0, nil", n, rs)
	}
}
