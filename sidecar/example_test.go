//go:build unix

package sidecar_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// The examples start the package "good" of a home the tests prepare
// (sidecar.PluginHome, a test helper): any package loaded with pluginpkg
// starts the same way.
func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := pluginpkg.LoadInstalled(sidecar.PluginHome())
	if err != nil {
		panic(err)
	}
	c, err := sidecar.Start(ctx, inst.Packages[0], sidecar.Options{Host: protocol.HostInfo{Name: "example", Version: "1.0.0"}})
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

// Invoke calls the methods whose answer is an output: here the plugin's
// provider "echo".
func ExampleClient_Invoke() {
	inst, err := pluginpkg.LoadInstalled(sidecar.PluginHome())
	if err != nil {
		panic(err)
	}
	c, err := sidecar.Start(context.Background(), inst.Packages[0], sidecar.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close(context.Background())
	out, err := c.Invoke(context.Background(), "provider/invoke", map[string]any{"ref": "echo", "input": "hi"})
	fmt.Println(string(out), err)
	// Output:
	// "hi" <nil>
}

// WithCallTimeout bounds each call made under a context, without a timer
// of its own per context; the caller's own deadline still applies.
func ExampleWithCallTimeout() {
	inst, err := pluginpkg.LoadInstalled(sidecar.PluginHome())
	if err != nil {
		panic(err)
	}
	c, err := sidecar.Start(context.Background(), inst.Packages[0], sidecar.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close(context.Background())

	ctx := sidecar.WithCallTimeout(context.Background(), 2*time.Second)
	out, err := c.Invoke(ctx, "provider/invoke", map[string]any{"ref": "echo", "input": "bounded"})
	if err != nil {
		fmt.Println(err) // wraps context.DeadlineExceeded after 2 s
		return
	}
	fmt.Println(string(out))
	// Output:
	// "bounded"
}
