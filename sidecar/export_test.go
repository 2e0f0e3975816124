package sidecar

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/extkernel/extkernel/internal/wire"
)

var exampleHome = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(binDir, "home", "packages", "good")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := os.ReadFile(filepath.Join("..", "testdata", "plugins", "good", "plugin.json"))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "plugin.json"), data, 0o644)
	}
	if err == nil {
		err = os.Link(filepath.Join(binDir, "good"), filepath.Join(dir, "good"))
	}
	return filepath.Join(binDir, "home"), err
})

// PluginHome returns a home with the test plugin "good" installed, for
// the examples. It is removed when the test binary exits.
func PluginHome() string {
	home, err := exampleHome()
	if err != nil {
		panic(err)
	}
	return home
}

// ping sends c a ping, as the heartbeat does (but queued behind other
// calls).
func ping(c *Client, ctx context.Context) error { return c.Call(ctx, wire.MethodPing, nil, nil) }
