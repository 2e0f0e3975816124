//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// progressTimeout is the own timeout of the calls of TestProgress: the
// plugin's handler runs three times as long.
const progressTimeout = 600 * time.Millisecond

// invokeVia calls the provider progress of the plugin good with input,
// under WithCallTimeout(progressTimeout), by Invoke, InvokeAsync or
// OpenStream (whose one chunk is the provider's output), and returns the
// output and the error.
type invokeVia func(t *testing.T, c *Client, input string) (string, error)

func viaInvoke(t *testing.T, c *Client, input string) (string, error) {
	ctx := WithCallTimeout(context.Background(), progressTimeout)
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "progress", Input: json.RawMessage(input)})
	return string(out), err
}

func viaAsync(t *testing.T, c *Client, input string) (string, error) {
	type answer struct {
		out json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	ctx := WithCallTimeout(context.Background(), progressTimeout)
	c.InvokeAsync(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "progress", Input: json.RawMessage(input)},
		func(out json.RawMessage, err error) { ch <- answer{out, err} })
	a := recv(t, ch, "the async answer")
	return string(a.out), a.err
}

func viaStream(t *testing.T, c *Client, input string) (string, error) {
	ctx := WithCallTimeout(context.Background(), progressTimeout)
	s, err := c.OpenStream(ctx, "progress", json.RawMessage(input), StreamOptions{})
	if err != nil {
		return "", err
	}
	defer s.Close()
	chunk, err := s.Next()
	if err != nil {
		return "", err
	}
	out := string(chunk)
	if _, err := s.Next(); err != io.EOF {
		return out, err
	}
	return out, nil
}

// TestProgress (not parallel: closeClient checks that no child process
// is left) starts the Go SDK plugin good for real and calls its
// provider progress, whose handler runs three times as long as the call's
// timeout: with a progress every 25 ms it succeeds, by Invoke, InvokeAsync
// and OpenStream alike; without progress it times out; progress without
// end cannot take a call past the host's maximum (MaxCallDuration); and a
// flood of 20,000 progresses at once does not stop the plugin, counts as
// nothing malformed and re-arms the call's timer no more than twice per
// timeout of the call's life (see progress.go).
func TestProgress(t *testing.T) {
	tests := []struct {
		name  string
		via   invokeVia
		input string
		max   time.Duration
		fails bool
	}{
		{name: "extends Invoke", via: viaInvoke, input: `{"ms":1800,"every":25}`},
		{name: "extends InvokeAsync", via: viaAsync, input: `{"ms":1800,"every":25}`},
		{name: "extends OpenStream", via: viaStream, input: `{"ms":1800,"every":25}`},
		{name: "no progress: Invoke times out", via: viaInvoke, input: `{"ms":1800}`, fails: true},
		{name: "no progress: InvokeAsync times out", via: viaAsync, input: `{"ms":1800}`, fails: true},
		{name: "no progress: OpenStream times out", via: viaStream, input: `{"ms":1800}`, fails: true},
		{name: "not past the maximum", via: viaInvoke, input: `{"ms":-1,"every":25}`, max: 1200 * time.Millisecond, fails: true},
		{name: "a flood is bounded", via: viaInvoke, input: `{"flood":20000,"ms":1800,"every":25}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, logs := testOptions(t)
			opts.MaxCallDuration = tt.max
			c := startGood(t, opts)
			defer closeClient(t, c)
			start := time.Now()
			out, err := tt.via(t, c, tt.input)
			elapsed := time.Since(start)
			switch {
			case tt.fails && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("call = %s, %v; want a timeout", out, err)
			case !tt.fails && (err != nil || out != `"done"`):
				t.Fatalf("call = %s, %v; want \"done\"", out, err)
			}
			if tt.max > 0 && elapsed < tt.max {
				t.Errorf("the call ended after %v, before the maximum %v", elapsed, tt.max)
			}
			// Re-arming needs a progress since the timer last fired, and
			// the next fire is a whole timeout after that progress.
			if n, bound := c.rearms.Load(), 2*int64(elapsed/progressTimeout)+2; n > bound {
				t.Errorf("the timer was re-armed %d times in %v, more than %d", n, elapsed, bound)
			}
			if err := c.Err(); err != nil {
				t.Errorf("client error = %v", err)
			}
			if warned, _ := countWarnings(logs.String()); warned != 0 {
				t.Errorf("%d malformed messages warned about", warned)
			}
		})
	}
}
