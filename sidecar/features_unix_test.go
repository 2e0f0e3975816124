//go:build unix

package sidecar

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
)

// TestStreamsByFeature holds, with a real plugin (the faulty plugin's
// stream-params mode, answering 1.4.0), that the host asks a plugin that
// announced "streams" for a stream, and one that did not for none: its
// chunk is then malformed and dropped, and its answer, {}, is the end of
// a stream of no item. OnUse hears of the stream asked for only, and of
// the handshake's version in both.
func TestStreamsByFeature(t *testing.T) {
	tests := []struct {
		features string
		want     []string
		uses     []string
	}{
		{"streams", []string{`{"window":16,"window_bytes":1048576}`}, []string{"protocol/1.4", "streams"}},
		{"calls", nil, []string{"protocol/1.4"}},
	}
	for _, tt := range tests {
		t.Run(tt.features, func(t *testing.T) {
			opts, _ := testOptions(t)
			var mu sync.Mutex
			var uses []string
			opts.OnUse = func(_ *Client, use string) {
				mu.Lock()
				uses = append(uses, use)
				mu.Unlock()
			}
			manifest := fmt.Sprintf(`{"format":1,"name":"flags","version":"0.1.0","runtime":{"command":"./faulty","args":["stream-params"],
				"env":{"FAULTY_FEATURES":%q}}}`, tt.features)
			c, err := Start(context.Background(), addPackage(t, t.TempDir(), "flags", manifest), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer closeClient(t, c)
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			s, err := c.OpenStream(ctx, "x", nil, StreamOptions{Window: 16})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var got []string
			for {
				data, err := s.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(data))
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(got, tt.want) || !slices.Equal(uses, tt.uses) {
				t.Errorf("items %q, uses %q; want %q, %q", got, uses, tt.want, tt.uses)
			}
		})
	}
}
