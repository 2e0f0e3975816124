package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestProgressAcrossLanguages holds the long calls of protocol 1.3 with
// real plugins on each SDK (Go, Python, Node.js; the interpreters must be
// there under EXTKERNEL_REQUIRE_INTERPRETERS=1): a provider that works
// three times the provider deadline while reporting progress is answered;
// one that reports none times out at the deadline; and progress without
// end cannot take a call past max_call_duration. Only lower bounds of
// elapsed time are asserted: a call cannot end before its maximum. The
// deadline is 40 times the progress interval, so that a plugin starved of
// CPU on a loaded machine (CI runs packages in parallel) still reports in
// time; the three plugins run in parallel.
func TestProgressAcrossLanguages(t *testing.T) {
	const deadline = 1000 * time.Millisecond
	const maxCall = 2500 * time.Millisecond
	cfg := callConfig(writePolyglotHome(t,
		polyglot(goLang, "go-a", []string{"poly.go-a@1.0.0"}),
		polyglot(pythonLang, "py", []string{"poly.py@1.0.0"}),
		polyglot(nodeLang, "js", []string{"poly.js@1.0.0"}),
	))
	cfg.Deadlines.Provider = deadline
	cfg.MaxCallDuration = maxCall
	k := startKernel(t, cfg)
	tests := []struct {
		name, script string
		fails        bool
	}{
		{name: "progress extends the deadline", script: `{"work":{"ms":2000,"every":25}}`},
		{name: "no progress: the deadline holds", script: `{"work":{"ms":2000}}`, fails: true},
		{name: "not past max_call_duration", script: `{"work":{"every":25}}`, fails: true},
	}
	for _, plugin := range []string{"go-a", "py", "js"} {
		t.Run(plugin, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					start := time.Now()
					out, err := k.CallProvider(ctx, "plugin/"+plugin+"/run", json.RawMessage(tt.script))
					elapsed := time.Since(start)
					switch {
					case tt.fails && !errors.Is(err, context.DeadlineExceeded):
						t.Fatalf("CallProvider = %s, %v; want a timeout", out, err)
					case !tt.fails && err != nil:
						t.Fatalf("CallProvider: %v", err)
					case !tt.fails && !strings.Contains(string(out), `"worked"`):
						t.Fatalf("CallProvider = %s, want the work's answer", out)
					}
					if tt.script == `{"work":{"every":25}}` && elapsed < maxCall {
						t.Errorf("the call ended after %v, before max_call_duration %v", elapsed, maxCall)
					}
				})
			}
		})
	}
}
