// Command good is a well-behaved extkernel plugin built on the Go SDK. The
// sidecar tests start it for real to exercise the happy paths: calls of
// every kind, cancellation, notifications, logging and a clean shutdown.
package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

func main() {
	p := sdk.New(os.Getenv("EXTKERNEL_PLUGIN_NAME"), os.Getenv("EXTKERNEL_PLUGIN_VERSION"))
	// GOOD_PROVIDES lists the capabilities to declare as "key@version,...";
	// unset means test.echo@1.0.0.
	provides := "test.echo@1.0.0"
	if v, ok := os.LookupEnv("GOOD_PROVIDES"); ok {
		provides = v
	}
	for _, kv := range strings.Split(provides, ",") {
		if key, version, ok := strings.Cut(kv, "@"); ok {
			p.Provide(key, version)
		}
	}
	p.InterceptWithPriority("tool.before", 10, func(_ context.Context, _ string, payload json.RawMessage) (protocol.InterceptResult, error) {
		if string(payload) == `"deny"` {
			return sdk.Deny("denied by good"), nil
		}
		return sdk.Modify(map[string]json.RawMessage{"seen": payload}), nil
	})
	p.Strategy("context.compactor", func(_ context.Context, input json.RawMessage) (any, error) {
		return map[string]any{"compacted": input}, nil
	})
	p.Provider("echo", "returns its input", func(_ context.Context, input json.RawMessage) (any, error) {
		return input, nil
	})
	p.Provider("env", "returns the environment and working directory", func(context.Context, json.RawMessage) (any, error) {
		wd, err := os.Getwd()
		return map[string]any{"env": os.Environ(), "cwd": wd}, err
	})
	p.Provider("fail", "fails", func(context.Context, json.RawMessage) (any, error) {
		return nil, &protocol.Error{Code: protocol.CodePluginError, Message: "failed on purpose"}
	})
	p.Provider("block", "notifies, blocks until cancelled, then notifies", func(ctx context.Context, input json.RawMessage) (any, error) {
		_ = p.Notify("blocking", input)
		<-ctx.Done()
		_ = p.Notify("cancelled", input)
		return nil, ctx.Err()
	})
	p.Provider("notify", "notifies and logs", func(_ context.Context, input json.RawMessage) (any, error) {
		p.Logger().Warn("notifying", "input", string(input))
		return nil, p.Notify("hello", input)
	})
	p.Provider("progress", "runs long, reporting progress", progress)
	p.Action("greet", "Greet", "toolbar", func(_ context.Context, input json.RawMessage) (any, error) {
		return "hello", nil
	})
	p.Serve()
}

// progressInput is the input of the provider progress: it first sends
// Flood progresses at once, then runs for MS milliseconds (until
// cancelled when negative), sending a progress every Every milliseconds (none
// when 0), and answers "done".
type progressInput struct {
	MS    int `json:"ms"`
	Every int `json:"every"`
	Flood int `json:"flood"`
}

func progress(ctx context.Context, input json.RawMessage) (any, error) {
	var in progressInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	for i := range in.Flood {
		if err := sdk.Progress(ctx, "flooding", float64(i)/float64(in.Flood)); err != nil {
			return nil, err
		}
	}
	var end <-chan time.Time
	if in.MS >= 0 {
		end = time.After(time.Duration(in.MS) * time.Millisecond)
	}
	var tick <-chan time.Time
	if in.Every > 0 {
		t := time.NewTicker(time.Duration(in.Every) * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-end:
			return "done", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick:
			if err := sdk.Progress(ctx, "working", -1); err != nil {
				return nil, err
			}
		}
	}
}
