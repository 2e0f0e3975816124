//go:build unix

package sidecar_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := pluginpkg.LoadInstalled(sidecar.PluginHome()) // holds the package "good"
	if err != nil {
		panic(err)
	}
	c, err := sidecar.Start(ctx, sidecar.PluginOf(inst.Packages[0]), sidecar.Options{HostName: "example", HostVersion: "1.0.0"})
	if err != nil {
		fmt.Println(err) // a *sidecar.StartError
		return
	}
	defer c.Close(context.Background())

	fmt.Println(c.Name(), c.Declarations().Interceptors[0].Point)
	res, err := c.Intercept(ctx, "tool.before", json.RawMessage(`{"cmd":"ls"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Decision, string(res.Payload))
	// Output:
	// good tool.before
	// modify {"seen":{"cmd":"ls"}}
}

func ExampleStartBatch() {
	inst, err := pluginpkg.LoadInstalled(sidecar.PluginHome())
	if err != nil {
		panic(err)
	}
	specs := []sidecar.Spec{{Plugin: sidecar.PluginOf(inst.Packages[0]), Options: sidecar.Options{HostName: "example", HostVersion: "1.0.0"}}}
	out := sidecar.StartBatch(context.Background(), specs, sidecar.BatchOptions{
		PoolSize: 4,
		Budget:   30 * time.Second,
		OnEvent: func(e sidecar.StartEvent) {
			if e.State != sidecar.StartLaunching {
				fmt.Println("event:", e.Plugin, e.State)
			}
		},
	})
	c := out[0].Client
	if c == nil {
		fmt.Println(out[0].Err) // a *sidecar.StartError
		return
	}
	defer c.Close(context.Background())
	res, err := c.Invoke(context.Background(), wire.MethodProviderInvoke,
		wire.ProviderInvokeParams{Ref: "echo", Input: json.RawMessage(`"hi"`)})
	fmt.Println(string(res), err)
	// Output:
	// event: good ready
	// "hi" <nil>
}

// WithCallTimeout bounds each call made under a context, without a timer
// of its own per context; the caller's own deadline still applies.
func ExampleWithCallTimeout() {
	inst, err := pluginpkg.LoadInstalled(sidecar.PluginHome())
	if err != nil {
		panic(err)
	}
	c, err := sidecar.Start(context.Background(), sidecar.PluginOf(inst.Packages[0]), sidecar.Options{HostName: "example", HostVersion: "1.0.0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close(context.Background())

	ctx := sidecar.WithCallTimeout(context.Background(), 2*time.Second)
	res, err := c.Intercept(ctx, "tool.before", json.RawMessage(`{"cmd":"ls"}`))
	if err != nil {
		fmt.Println(err) // wraps context.DeadlineExceeded after 2 s
		return
	}
	fmt.Println(res.Decision)
	// Output:
	// modify
}
