package generation

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// TestKernelRangeRefused holds that a member whose manifest's kernel range
// rejects this host's protocol is refused before anything is spawned, as
// the sidecar refused it before it took a sidecar.Plugin: a StartError in
// PhaseVersion wrapping the *protocol.VersionError, reported starting then
// failed. A required one fails the build, and nothing else is launched
// (the batch is not started: the build fails anyway); an optional one is a
// failed member.
func TestKernelRangeRefused(t *testing.T) {
	const want = `plugin "old": version: plugin wants protocol ^2.0 but this host speaks ` + protocol.Version +
		`: upgrade the host`
	for _, required := range []bool{true, false} {
		t.Run(map[bool]string{true: "required", false: "optional"}[required], func(t *testing.T) {
			h := &planHome{t: t, dir: t.TempDir(), mans: map[string]map[string]any{}}
			h.put("old", map[string]any{"kernel": "^2.0",
				"runtime": map[string]any{"command": "./bin/plugin", "required": required}})
			if required {
				h.put("other", nil) // would be launched (and fail) if the batch started
			}
			in := h.inputs()
			var events []string
			in.Observer.OnEvent = func(e StartEvent) {
				msg := ""
				if e.Err != nil {
					msg = ": " + e.Err.Error()
				}
				events = append(events, e.Plugin+" "+string(e.State)+msg)
			}
			g, err := Build(context.Background(), in)
			if wantEvents := []string{"old starting", "old failed: " + want}; !reflect.DeepEqual(events, wantEvents) {
				t.Errorf("events = %q, want %q", events, wantEvents)
			}
			if !required {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				defer g.Close(context.Background())
				if m := g.Member("old"); m.Status != StatusFailed || m.Reason != want {
					t.Errorf("member = %s %q, want failed with %q", m.Status, m.Reason, want)
				}
				return
			}
			var be *BuildError
			var se *sidecar.StartError
			var ve *protocol.VersionError
			if !errors.As(err, &be) || !errors.As(err, &se) || !errors.As(err, &ve) {
				t.Fatalf("Build = %v, want a *BuildError wrapping a *sidecar.StartError and a *protocol.VersionError", err)
			}
			if se.Phase != sidecar.PhaseVersion || ve.Wanted != "^2.0" || ve.Upgrade != "host" {
				t.Errorf("StartError phase %q, VersionError %+v; want %q, ^2.0, upgrade the host", se.Phase, ve, sidecar.PhaseVersion)
			}
			if wantProblems := []string{`required plugin "old" failed: ` + want}; !reflect.DeepEqual(be.Problems, wantProblems) {
				t.Errorf("problems = %q, want %q", be.Problems, wantProblems)
			}
		})
	}
}
