package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
)

// demoConfig loads the demo host config, with logs silenced for the
// example's output. The demo plugins are built by TestMain.
func demoConfig() config.Config {
	cfg, err := config.Load(filepath.Join("..", "testdata", "demo", "kernel.json"))
	if err != nil {
		panic(err)
	}
	cfg.Logger = hclog.NewNullLogger()
	return cfg
}

// A host creates a kernel from its config, starts it, dispatches through it
// and closes it.
func Example() {
	k, err := kernel.New(demoConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close(ctx)

	res, err := k.Intercept(ctx, "tool.before", json.RawMessage(`{"cmd":"curl -H sk-abcdefghijkl"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("generation %d: %s\n", res.Generation, res.Payload)
	for _, s := range res.Steps {
		fmt.Println(s.Plugin, s.Decision)
	}
	// Output:
	// generation 1: {"cmd":"curl -H [REDACTED]"}
	// redactor modify
}

// Handlers serve the host capabilities plugins call (config.Config.Handlers,
// docs/protocol.md §5.11): the demo's redactor logs each redaction through
// host.log, which the host provides (its config lists it in capabilities)
// and serves here, while the intercept that caused the call waits.
func ExampleKernel_handlers() {
	cfg := demoConfig()
	cfg.Handlers = map[capability.Key]capability.Handler{
		"host.log": func(_ context.Context, call *capability.Call) (json.RawMessage, error) {
			fmt.Printf("%s called %s.%s: %s\n", call.Caller, call.Capability, call.Method, call.Input)
			return json.RawMessage(`{}`), nil
		},
	}
	k, err := kernel.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close(ctx)
	res, err := k.Intercept(ctx, "prompt.submit", json.RawMessage(`"my password=hunter2"`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(res.Payload))
	// Output:
	// redactor called host.log.write: {"fields":{"point":"prompt.submit"},"level":"info","message":"redacted a secret"}
	// "my [REDACTED]"
}

// Strategy calls the owner of a slot, or says that the host default applies.
func ExampleKernel_Strategy() {
	k, _ := kernel.New(demoConfig())
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close(ctx)
	res, err := k.Strategy(ctx, "context.compactor", json.RawMessage(`["a","b","c","d","e"]`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Owner, res.HostDefault, string(res.Output))
	// Output:
	// memory false ["c","d","e"]
}

// CallProvider and RunAction address contributions by ID.
func ExampleKernel_CallProvider() {
	k, _ := kernel.New(demoConfig())
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close(ctx)
	out, err := k.CallProvider(ctx, "plugin/redactor/redact", json.RawMessage(`"password=hunter2 ok"`))
	fmt.Println(string(out), err)
	out, err = k.RunAction(ctx, "plugin/memory/forget", nil)
	fmt.Println(string(out), err)
	// Output:
	// "[REDACTED] ok" <nil>
	// {"status":"forgotten"} <nil>
}

// Reload plans against the home and applies the plan; with nothing changed
// it restarts nothing and publishes nothing.
func ExampleKernel_Reload() {
	k, _ := kernel.New(demoConfig())
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close(ctx)
	res, err := k.Reload(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("published:", res.Published, "generation:", res.Generation.Number())
	for _, c := range res.Plan.Packages {
		fmt.Println(c.Name, c.Class)
	}
	// Output:
	// published: false generation: 1
	// audit unchanged
	// kvstore unchanged
	// memory unchanged
	// redactor unchanged
	// themes unchanged
}

// Subscribe delivers the kernel's events (package kernel/observe), one at a
// time and in order, from the goroutine that produced them: here, Start's.
func ExampleKernel_Subscribe() {
	k, err := kernel.New(demoConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	unsubscribe := k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventGenerationPublished {
			fmt.Println("published generation", e.Generation)
		}
	})
	defer unsubscribe()
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close(ctx)
	// Output:
	// published generation 1
}

// Plugins reports the supervision state of each plugin that runs a
// sidecar (a declarative package, such as the demo's themes, has none),
// sorted by name, with its process ID (and its call counters, Calls).
func ExampleKernel_Plugins() {
	k, _ := kernel.New(demoConfig())
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer k.Close(ctx)
	for _, p := range k.Plugins() {
		fmt.Println(p.Name, p.State, p.PID != 0)
	}
	// Output:
	// audit ready true
	// kvstore ready true
	// memory ready true
	// redactor ready true
}
