//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// streamerManifest runs the Go SDK plugin testdata/plugins/streamer.
const streamerManifest = `{"format": 1, "name": "streamer", "version": "1.0.0", "runtime": {"command": "./streamer"}}`

// notes collects the notify events of a client, in order.
type notes chan wire.NotifyParams

// startStreamer starts the streamer plugin (or, with mode, the faulty
// plugin in that mode) with opts, its notify events sent on the returned
// channel, closed at the end of the test.
func startStreamer(t *testing.T, mode string, opts Options) (*Client, notes) {
	t.Helper()
	manifest := streamerManifest
	if mode != "" {
		manifest = plugintest.FaultyManifest("streamer", mode, false)
	}
	pkg := addPackage(t, t.TempDir(), "streamer", manifest)
	events := make(notes, 1024)
	opts.OnNotify = func(_ *Client, event string, data json.RawMessage) {
		n := wire.NotifyParams{Event: event, Data: data}
		select {
		case events <- n:
		default:
			t.Errorf("notify %s dropped: the test reads too few", n.Event)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, pkg, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { closeClient(t, c) })
	return c, events
}

// awaitNote waits for the notify event named event, skipping others, and
// returns its data.
func awaitNote(t *testing.T, events notes, event string) json.RawMessage {
	t.Helper()
	for {
		n := recv(t, events, "notify "+event)
		if n.Event == event {
			return n.Data
		}
	}
}

// openCount opens the streamer's "count" stream with input and window.
func openCount(t *testing.T, ctx context.Context, c *Client, input string, window int) *Stream {
	t.Helper()
	s, err := c.OpenStream(ctx, "count", json.RawMessage(input), StreamOptions{Window: window})
	if err != nil {
		t.Fatalf("OpenStream(count %s): %v", input, err)
	}
	t.Cleanup(s.Close)
	return s
}

// drain takes every chunk of s and returns them with the error that ended
// the stream (nil for io.EOF).
func drain(s *Stream) ([]string, error) {
	var chunks []string
	for {
		data, err := s.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return chunks, err
		}
		chunks = append(chunks, string(data))
	}
}

// counted returns the chunks {"i":from} .. {"i":to}.
func counted(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf(`{"i":%d}`, i))
	}
	return out
}

// TestStreamEnds holds what a stream yields from its start to its end,
// normal or failed, for each window: every chunk in order, a
// non-streaming provider's output as the one chunk, the producer's error
// answer after the chunks it sent; the stream never holds more than its
// window.
func TestStreamEnds(t *testing.T) {
	opts, _ := testOptions(t)
	c, _ := startStreamer(t, "", opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	tests := []struct {
		name, ref, input string
		window           int
		want             []string
		err              string // the error's text; "" for the normal end
	}{
		{"to the end", "count", `{"n":40}`, 0, counted(1, 40), ""},
		{"window of one", "count", `{"n":5}`, 1, counted(1, 5), ""},
		{"window above the maximum", "count", `{"n":3}`, wire.MaxStreamWindow + 1, counted(1, 3), ""},
		{"no chunks", "count", `{"n":0}`, 4, nil, ""},
		{"a provider that does not stream", "plain", `{"a":1}`, 4, []string{`{"plain":{"a":1}}`}, ""},
		{"cancelled by the producer", "count", `{"n":10,"fail_at":4}`, 2, counted(1, 3),
			`plugin "streamer": provider/invoke: failed at chunk 4 (code -32000)`},
		{"unknown provider", "nope", `{}`, 2, nil,
			`plugin "streamer": provider/invoke: unknown provider "nope" (declared: count, plain, relay) (code -32004)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := c.OpenStream(ctx, tt.ref, json.RawMessage(tt.input), StreamOptions{Window: tt.window})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := drain(s)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("chunks %q\nwant   %q", got, tt.want)
			}
			if gotErr := fmt.Sprint(err); (tt.err == "" && err != nil) || (tt.err != "" && gotErr != tt.err) {
				t.Errorf("end: %v, want %q", err, tt.err)
			}
			if _, again := s.Next(); fmt.Sprint(again) != fmt.Sprint(errOrEOF(err)) {
				t.Errorf("Next after the end = %v, want %v again", again, errOrEOF(err))
			}
			if peakOf(s) > s.Window() {
				t.Errorf("the stream held %d chunks, more than its window %d", peakOf(s), s.Window())
			}
		})
	}
}

func errOrEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// TestStreamSlowConsumer: a consumer that takes nothing holds the producer
// back at the window; the stream then holds exactly the window, and never
// more, and the producer goes on as the consumer takes.
func TestStreamSlowConsumer(t *testing.T) {
	opts, _ := testOptions(t)
	c, events := startStreamer(t, "", opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	const window, n = 4, 20
	s := openCount(t, ctx, c, fmt.Sprintf(`{"n":%d,"notify":true}`, n), window)
	// The notify follows its chunk on the pipe: once it is read, the
	// chunk is buffered.
	for i := 1; i <= window; i++ {
		if got := string(awaitNote(t, events, "sent")); got != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("sent %s, want chunk %d", got, i)
		}
	}
	if b := s.buffered(); b != window {
		t.Fatalf("Buffered = %d once the producer sent the window, want %d", b, window)
	}
	got, err := drain(s)
	if err != nil || strings.Join(got, " ") != strings.Join(counted(1, n), " ") {
		t.Fatalf("chunks %q, %v; want 1..%d", got, err, n)
	}
	if peakOf(s) != window {
		t.Errorf("Peak = %d, want the window %d", peakOf(s), window)
	}
}

// TestStreamCancelledByHost: a stream closed, or whose context ends, half
// way is cancelled: the producer's send fails (it notifies "closed"), and
// the plugin serves on.
func TestStreamCancelledByHost(t *testing.T) {
	for _, how := range []string{"close", "context"} {
		t.Run(how, func(t *testing.T) {
			opts, _ := testOptions(t)
			c, events := startStreamer(t, "", opts)
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			sctx, stop := context.WithCancel(ctx)
			defer stop()
			s := openCount(t, sctx, c, `{"n":100000}`, 2)
			for i := range 3 {
				if data, err := s.Next(); err != nil || string(data) != fmt.Sprintf(`{"i":%d}`, i+1) {
					t.Fatalf("chunk %d: %s, %v", i+1, data, err)
				}
			}
			var want error
			if how == "close" {
				s.Close()
				want = errStreamClosed
			} else {
				stop()
				want = context.Canceled
			}
			if _, err := s.Next(); !errors.Is(err, want) {
				t.Errorf("Next after the cancel = %v, want %v", err, want)
			}
			awaitNote(t, events, "closed")
			out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "plain", Input: json.RawMessage(`1`)})
			if err != nil || string(out) != `{"plain":1}` {
				t.Errorf("plain after the cancel = %s, %v", out, err)
			}
		})
	}
}

// TestStreamCrash: the crash of the producer ends the stream with the
// *CrashError at once, even with chunks buffered.
func TestStreamCrash(t *testing.T) {
	opts, _ := testOptions(t)
	c, _ := startStreamer(t, "", opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	s := openCount(t, ctx, c, `{"n":10,"crash_at":3}`, 4)
	recv(t, c.Done(), "crash")
	var ce *CrashError
	if data, err := s.Next(); !errors.As(err, &ce) || ce.ExitStatus != "exit status 3" {
		t.Errorf("Next after the crash = %s, %v; want the *CrashError (exit status 3)", data, err)
	}
}

// TestStreamInvalidChunk: a chunk frame in the Go SDK's layout, which the
// reader cuts without scanning its data, whose data is not JSON (a raw
// control character) is never handed out: Next fails with ErrProtocol
// and the plugin is stopped, as for any frame that is not JSON.
func TestStreamInvalidChunk(t *testing.T) {
	opts, _ := testOptions(t)
	c, _ := startStreamer(t, "stream-bad-chunk", opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	s := openCount(t, ctx, c, `{}`, 3)
	data, err := s.Next()
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "the data is not valid JSON") {
		t.Fatalf("Next = %q, %v; want ErrProtocol for the chunk", data, err)
	}
	recv(t, c.Done(), "the plugin's stop")
	if err := c.Err(); !errors.Is(err, ErrProtocol) {
		t.Errorf("client error = %v, want the protocol violation", err)
	}
}

// TestStreamFlowControlViolation: a chunk beyond the window fails the
// stream with ErrFlowControl at once and cancels the request; the plugin
// keeps running, and a chunk for a request that asked for no stream is
// dropped.
func TestStreamFlowControlViolation(t *testing.T) {
	opts, logs := testOptions(t)
	c, events := startStreamer(t, "stream-flood", opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	s := openCount(t, ctx, c, `{}`, 3)
	awaitNote(t, events, "flooded") // every chunk was read: the violation is known
	data, err := s.Next()
	if !errors.Is(err, ErrFlowControl) || !strings.Contains(err.Error(), "chunk 4 is beyond the window") {
		t.Fatalf("Next = %s, %v; want ErrFlowControl for chunk 4", data, err)
	}
	if peakOf(s) > 3 {
		t.Errorf("Peak = %d, beyond the window", peakOf(s))
	}
	if id := awaitNote(t, events, "cancelled"); string(id) != "2" { // request 1 was initialize
		t.Errorf("the plugin saw $/cancel for %s, want 2", id)
	}
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x", Input: json.RawMessage(`"still here"`)})
	if err != nil || string(out) != `"still here"` {
		t.Errorf("call after the violation = %s, %v", out, err)
	}
	if c.Err() != nil {
		t.Errorf("the plugin was stopped: %v", c.Err())
	}
	if !strings.Contains(logs.String(), "which asked for no stream") {
		t.Errorf("no warning for the stray chunk in the log")
	}
}

// TestStreamAfterClose: a stream opened on a closed client fails with
// ErrClosed, and Close of a stream is idempotent.
func TestStreamAfterClose(t *testing.T) {
	opts, _ := testOptions(t)
	c, _ := startStreamer(t, "", opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	s := openCount(t, ctx, c, `{"n":1}`, 1)
	s.Close()
	s.Close()
	closeClient(t, c)
	if _, err := c.OpenStream(ctx, "count", nil, StreamOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("OpenStream after Close = %v, want ErrClosed", err)
	}
}

// TestCallStream holds the host's sending end of a plugin's stream call:
// every chunk Send sends reaches the plugin in order, the output OnCall
// returns is one more, Send never has more than the window
// unacknowledged, and the plugin breaking out of its range cancels the
// call, which Send then reports.
func TestCallStream(t *testing.T) {
	type result struct {
		Chunks []json.RawMessage `json:"chunks"`
		Error  *protocol.Error   `json:"error"`
	}
	sendErr := make(chan error, 1)
	opts, _ := testOptions(t)
	opts.OnCall = func(ctx context.Context, call Call) (json.RawMessage, error) {
		if call.Stream == nil {
			return nil, errors.New("no stream asked for")
		}
		var n int
		_ = json.Unmarshal(call.Input, &n)
		for i := 1; i <= n; i++ {
			if err := call.Stream.Send(ctx, json.RawMessage(fmt.Sprint(i))); err != nil {
				sendErr <- err
				return nil, err
			}
			call.Stream.mu.Lock()
			unacked := call.Stream.mu.sent - call.Stream.mu.acked
			call.Stream.mu.Unlock()
			if unacked > int64(call.Stream.Window()) {
				t.Errorf("%d chunks unacknowledged, window %d", unacked, call.Stream.Window())
			}
		}
		return json.RawMessage(`"last"`), nil
	}
	c, _ := startStreamer(t, "", opts)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	relay := func(input string) result {
		t.Helper()
		out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "relay", Input: json.RawMessage(input)})
		if err != nil {
			t.Fatal(err)
		}
		var r result
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := relay(`{"capability":"gen.numbers","method":"count","input":40,"delay_ms":1}`)
	if len(r.Chunks) != 41 || string(r.Chunks[0]) != "1" || string(r.Chunks[39]) != "40" || string(r.Chunks[40]) != `"last"` || r.Error != nil {
		t.Errorf("relay = %s %v, want 1..40 and \"last\"", r.Chunks, r.Error)
	}
	r = relay(`{"capability":"gen.numbers","method":"count","input":100000,"take":3}`)
	if len(r.Chunks) != 3 || r.Error != nil {
		t.Errorf("relay take 3 = %s %v", r.Chunks, r.Error)
	}
	if err := recv(t, sendErr, "Send's error"); !errors.Is(err, errCallCancelled) {
		t.Errorf("Send after the plugin's cancel = %v, want %v", err, errCallCancelled)
	}
}

// TestStreamByteWindow: a producer of protocol 1.2 is asked for the byte
// window (Limits.StreamWindowBytes) and held to it: two chunks of 600 KiB
// within the window of chunks take its unacknowledged data past 1 MiB, so
// the stream fails with ErrFlowControl, and the host never held more
// than the byte window.
func TestStreamByteWindow(t *testing.T) {
	opts, _ := testOptions(t)
	c, err := Start(context.Background(), installFixture(t, "stream-bytes"), opts)
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
	var got error
	for got == nil {
		_, got = s.Next()
	}
	if !errors.Is(got, ErrFlowControl) || !strings.Contains(got.Error(), "beyond the byte window") {
		t.Errorf("Next = %v, want ErrFlowControl for the byte window", got)
	}
	if peak := peakBytesOf(s); peak > wire.DefaultStreamWindowBytes {
		t.Errorf("the stream held %d bytes, over its byte window %d", peak, wire.DefaultStreamWindowBytes)
	}
	if c.Err() != nil {
		t.Errorf("the plugin was stopped for a stream's flow control: %v", c.Err())
	}
}

// TestStreamWindowsAsked: a plugin of protocol 1.2 is asked for the
// window of chunks given and the byte window; one of protocol 1.1 does
// not know the byte window, so it is asked for one chunk per 4 MiB of it
// (at least one), which keeps the data the host holds within it.
func TestStreamWindowsAsked(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		limit   uint64
		want    string
	}{
		{"stream-params", 0, `{"window":16,"window_bytes":1048576}`},
		{"stream-params", 64 << 10, `{"window":16,"window_bytes":65536}`},
		{"stream-params-old", 0, `{"window":1,"window_bytes":1048576}`},
		{"stream-params-old", 12 << 20, `{"window":3,"window_bytes":12582912}`},
	} {
		t.Run(fmt.Sprintf("%s/%d", tt.fixture, tt.limit), func(t *testing.T) {
			opts, _ := testOptions(t)
			opts.Limits.StreamWindowBytes = tt.limit
			c, err := Start(context.Background(), installFixture(t, tt.fixture), opts)
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
			data, err := s.Next()
			if err != nil || string(data) != tt.want {
				t.Errorf("asked with %s, %v; want %s", data, err, tt.want)
			}
		})
	}
}

// peakOf is the most chunks s held at once.
func peakOf(s *Stream) int {
	n, _ := s.Peak()
	return n
}

// peakBytesOf is the most chunk data s held at once.
func peakBytesOf(s *Stream) int64 {
	_, b := s.Peak()
	return b
}
