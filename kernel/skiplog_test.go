package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestSkipLogOncePerState drives skipLog alone: a run of skips warns
// once, the rest go to debug, and serving again reports the count and
// ends the run.
func TestSkipLogOncePerState(t *testing.T) {
	var logs syncBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info, JSONFormat: true})
	var s skipLog
	m := &generation.Member{Package: &pluginpkg.Package{Name: "p"}}
	steps := []struct {
		skips     int
		serve     bool
		wantLines int // new lines at info and above
		want      string
	}{
		{skips: 1000, wantLines: 1, want: `"@message":"optional interceptor skipped; further skips`},
		{serve: true, wantLines: 1, want: `"skipped_calls":1000`},
		{serve: true, wantLines: 0},
		{skips: 3, wantLines: 1, want: `"@message":"optional interceptor skipped; further skips`},
	}
	for i, st := range steps {
		before := logs.String()
		for range st.skips {
			s.skipped(log, m.Package.Name, nil, "tool.before", ErrPluginDown)
		}
		if st.serve {
			s.served(log, "p")
		}
		added := strings.TrimPrefix(logs.String(), before)
		if n := strings.Count(added, "\n"); n != st.wantLines || !strings.Contains(added, st.want) {
			t.Errorf("step %d logged %d lines, want %d with %s:\n%s", i, n, st.wantLines, st.want, added)
		}
	}
}

// TestDownPluginLoggedOnce dispatches 1000 calls to an optional plugin
// that crashed (and is not restarted during the test): the kernel logs a
// bounded number of lines, not one per call.
func TestDownPluginLoggedOnce(t *testing.T) {
	cfg := testConfig(writeHome(t,
		plug{name: "crashy", priority: 5, intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=crash"}},
		plug{name: "steady", intercepts: []string{"tool.before"}, env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=modify"}}))
	var logs syncBuffer
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info, JSONFormat: true})
	cfg.Supervision.BackoffMin = time.Hour // no restart during the test
	k := startKernel(t, cfg)
	crashed := make(chan struct{}, 1)
	unsub := k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventPluginCrashed {
			crashed <- struct{}{}
		}
	})
	defer unsub()
	if _, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-crashed:
	case <-time.After(10 * time.Second):
		t.Fatal("no crash event")
	}
	before := logs.String()
	for range 1000 {
		res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
		if err != nil || !errors.Is(res.Steps[0].Err, ErrPluginDown) {
			t.Fatalf("%+v, %v: want crashy skipped", res, err)
		}
	}
	if added := strings.TrimPrefix(logs.String(), before); strings.Count(added, "\n") > 2 {
		t.Errorf("1000 skipped calls logged %d lines:\n%s", strings.Count(added, "\n"), tailString(added, 2000))
	}
}

func tailString(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
