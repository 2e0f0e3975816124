// Command confined is the confinement test plugin on the Go SDK: what a
// plugin author writes that needs its package, its data directory and one
// server. Its provider "work" reads asset.txt in its package directory,
// writes state.txt in its data directory (EXTKERNEL_DATA_DIR), gets
// CONFINED_URL (an http URL, when set) and reads the file CONFINED_READ
// (when set), and answers what it read; the first that fails fails the
// call with Go's own error ("open /x: permission denied"), as an author's
// code would. The cmd/kernelctl tests run `kernelctl conformance
// --confine` on it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/extkernel/extkernel/sdk"
)

func main() {
	p := sdk.New(os.Getenv("EXTKERNEL_PLUGIN_NAME"), os.Getenv("EXTKERNEL_PLUGIN_VERSION"))
	p.Provider("work", "reads its package, writes its data, gets CONFINED_URL, reads CONFINED_READ", func(ctx context.Context, _ json.RawMessage) (any, error) {
		return work(ctx)
	})
	p.Serve()
}

// work does what the provider does and returns what it read.
func work(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	asset, err := os.ReadFile("asset.txt") // the working directory is the package
	if err != nil {
		return nil, err
	}
	out["asset"] = string(asset)
	data := os.Getenv("EXTKERNEL_DATA_DIR")
	if data == "" {
		return nil, errors.New("no EXTKERNEL_DATA_DIR")
	}
	if err := os.WriteFile(filepath.Join(data, "state.txt"), asset, 0o600); err != nil {
		return nil, err
	}
	if url := os.Getenv("CONFINED_URL"); url != "" {
		body, err := get(ctx, url)
		if err != nil {
			return nil, err
		}
		out["fetched"] = body
	}
	if f := os.Getenv("CONFINED_READ"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out["read"] = string(b)
	}
	return out, nil
}

// get returns the body of url.
func get(ctx context.Context, url string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("get %s: %s", url, resp.Status)
	}
	return string(b), err
}
