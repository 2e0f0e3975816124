package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// The stream tests run the streams test plugin (testdata/plugins/streamer
// describes it) in each SDK: Go, Python and Node.js.
var streamLangs = []string{"go", "python", "node"}

// streamPlug is a package running the streamer plugin in lang.
type streamPlug struct {
	plug
	lang string
}

// streamHome writes a home with the given streamer packages: a Go one
// runs the built streamer, a Python or Node.js one the SDK's
// testdata/streamer.py or .js with its SDK file beside it (skipped, or
// failed in CI, without the interpreter).
func streamHome(t *testing.T, plugs ...streamPlug) string {
	t.Helper()
	ps := make([]plug, len(plugs))
	for i, sp := range plugs {
		ps[i] = sp.plug
		ps[i].bin = streamerBin
	}
	home := writeHome(t, ps...)
	for i, sp := range plugs {
		var interpreter, script, sdkFile string
		switch sp.lang {
		case "go":
			continue
		case "python":
			interpreter, script, sdkFile = "python3", "streamer.py", "../sdk/python/extkernel.py"
		case "node":
			interpreter, script, sdkFile = "node", "streamer.js", "../sdk/node/extkernel.js"
		default:
			t.Fatalf("no streamer in %q", sp.lang)
		}
		proctest.Interpreter(t, interpreter)
		dir := filepath.Join(home, "packages", sp.name)
		for _, src := range []string{"../sdk/testdata/" + script, sdkFile} {
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(src)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		m := manifest(ps[i])
		rt := m["runtime"].(map[string]any)
		rt["command"], rt["args"] = interpreter, []string{script}
		writeJSON(t, filepath.Join(dir, "plugin.json"), m)
	}
	return home
}

// streamHook makes the kernel report every stream it opens to a provider
// on the returned channel, until the test ends: call it before
// startKernel, so the kernel is closed first.
func streamHook(t *testing.T) <-chan *sidecar.Stream {
	t.Helper()
	ch := make(chan *sidecar.Stream, 64)
	streamOpened = func(s *sidecar.Stream) { ch <- s }
	t.Cleanup(func() { streamOpened = nil })
	return ch
}

// collect ranges over seq and returns its chunks and its error, nil for
// the normal end.
func collect(seq iter.Seq2[json.RawMessage, error]) (chunks []string, err error) {
	for data, err := range seq {
		if err != nil {
			return chunks, err
		}
		chunks = append(chunks, string(data))
	}
	return chunks, nil
}

// counted returns the chunks {"i":from} .. {"i":to}.
func counted(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf(`{"i":%d}`, i))
	}
	return out
}

// awaitNotify waits for the EventNotify named name from plugin, skipping
// others.
func awaitNotify(t *testing.T, events <-chan observe.Event, plugin, name string) observe.Event {
	t.Helper()
	for {
		if e := nextEvent(t, events); e.Plugin == plugin && e.Name == name {
			return e
		}
	}
}

// TestStreamProvider consumes a provider's stream through the kernel, for
// a producer in each SDK: to the end, from a provider that does not stream
// (one chunk), cancelled half way by the producer (its error after the
// chunks it sent) and by the host (breaking out of the range: the
// producer's send fails or its generator is closed), under a slow
// consumer (the host never holds more than the window), and through the
// producer's crash (at once, with the crash).
func TestStreamProvider(t *testing.T) {
	for _, lang := range streamLangs {
		t.Run(lang, func(t *testing.T) {
			opened := streamHook(t)
			cfg := testConfig(streamHome(t, streamPlug{plug: plug{name: "gen"}, lang: lang}))
			cfg.StreamWindow = 4
			k := startKernel(t, cfg)
			events := notifyEvents(t, k)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			stream := func(ref, input string) iter.Seq2[json.RawMessage, error] {
				return k.StreamProvider(ctx, "plugin/gen/"+ref, json.RawMessage(input))
			}

			t.Run("to the end", func(t *testing.T) {
				got, err := collect(stream("count", `{"n":30}`))
				if err != nil || strings.Join(got, " ") != strings.Join(counted(1, 30), " ") {
					t.Errorf("chunks %q, %v; want 1..30", got, err)
				}
				if s := <-opened; peakChunks(s) > 4 || s.Window() != 4 {
					t.Errorf("the host held %d chunks, window %d; want at most 4, window 4", peakChunks(s), s.Window())
				}
			})
			t.Run("a provider that does not stream", func(t *testing.T) {
				got, err := collect(stream("plain", `[1,2]`))
				if err != nil || strings.Join(got, " ") != `{"plain":[1,2]}` {
					t.Errorf("chunks %q, %v; want the one output", got, err)
				}
				<-opened
			})
			t.Run("cancelled half way by the producer", func(t *testing.T) {
				got, err := collect(stream("count", `{"n":10,"fail_at":4}`))
				var pe *protocol.Error
				var perr *PluginError
				if !errors.As(err, &perr) || perr.Plugin != "gen" || perr.Key != "plugin/gen/count" ||
					!errors.As(err, &pe) || pe.Code != protocol.CodePluginError || pe.Message != "failed at chunk 4" {
					t.Errorf("error %v, want the *PluginError of the producer's -32000", err)
				}
				if strings.Join(got, " ") != strings.Join(counted(1, 3), " ") {
					t.Errorf("chunks %q, want 1..3 before the error", got)
				}
				<-opened
			})
			t.Run("cancelled half way by the host", func(t *testing.T) {
				n := 0
				for data, err := range stream("count", `{"n":100000}`) {
					if err != nil {
						t.Fatal(err)
					}
					if n++; string(data) != fmt.Sprintf(`{"i":%d}`, n) {
						t.Fatalf("chunk %d = %s", n, data)
					}
					if n == 3 {
						break
					}
				}
				awaitNotify(t, events, "gen", "closed")
				<-opened
			})
			t.Run("slow consumer", func(t *testing.T) {
				n := 0
				var s *sidecar.Stream
				for data, err := range stream("count", `{"n":20,"notify":true}`) {
					if err != nil {
						t.Fatal(err)
					}
					if n++; n == 1 {
						// Chunk 1 taken, none acknowledged: the producer
						// sends up to the window (each "sent" follows its
						// chunk) and waits.
						s = <-opened
						for i := 1; i <= 4; i++ {
							if e := awaitNotify(t, events, "gen", "sent"); string(e.Data) != fmt.Sprintf(`{"i":%d}`, i) {
								t.Fatalf("sent %s, want %d", e.Data, i)
							}
						}
						if b := peakChunks(s); b < 3 {
							t.Errorf("the host held at most %d chunks with the producer at its window, want at least 3", b)
						}
					}
					_ = data
				}
				if n != 20 || peakChunks(s) > 4 {
					t.Errorf("%d chunks, the host held up to %d; want 20, at most the window 4", n, peakChunks(s))
				}
			})
			t.Run("unknown provider", func(t *testing.T) {
				if _, err := collect(stream("nope", `{}`)); !errors.Is(err, ErrUnknownTarget) {
					t.Errorf("error %v, want ErrUnknownTarget", err)
				}
			})
			t.Run("crash mid-stream", func(t *testing.T) {
				_, err := collect(stream("count", `{"n":10,"crash_at":3}`))
				var ce *sidecar.CrashError
				if !errors.As(err, &ce) || ce.ExitStatus != "exit status 3" {
					t.Errorf("error %v, want the crash (exit status 3)", err)
				}
				<-opened
			})
		})
	}
}

// relayOutcome is what the streamer's relay provider answers.
type relayOutcome struct {
	Chunks []json.RawMessage `json:"chunks"`
	Error  *protocol.Error   `json:"error"`
}

func (o relayOutcome) chunks() string {
	parts := make([]string, len(o.Chunks))
	for i, c := range o.Chunks {
		parts[i] = string(c)
	}
	return strings.Join(parts, " ")
}

// TestStreamRelay: a plugin consumes another plugin's stream through the
// kernel (capability/call asking for a stream), for consumers and
// producers in each SDK: to the end under a slow consumer (the kernel
// holds at most the consumer's window), cancelled half way by the
// consumer and by the producer, from a provider that does not stream and
// from a host handler (one chunk each), an unauthorized one, the host
// cancelling the consumer's request (which reaches the producer), and the
// producer's crash.
func TestStreamRelay(t *testing.T) {
	pairs := []struct{ consumer, producer string }{
		{"go", "go"}, {"python", "go"}, {"node", "go"}, {"go", "python"}, {"go", "node"},
	}
	for _, pair := range pairs {
		t.Run(pair.consumer+" from "+pair.producer, func(t *testing.T) {
			opened := streamHook(t)
			gen := streamPlug{lang: pair.producer, plug: plug{name: "gen", provides: []string{"gen.numbers@1.0.0"},
				methods: map[string]map[string]string{"gen.numbers": {"count": "count", "plain": "plain"}}}}
			use := streamPlug{lang: pair.consumer, plug: plug{name: "use", requires: []string{"gen.numbers ^1.0", "host.log ^1.0"}}}
			k := startKernel(t, callConfig(streamHome(t, gen, use)))
			events := notifyEvents(t, k)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			relay := func(ctx context.Context, input string) relayOutcome {
				t.Helper()
				out, err := k.CallProvider(ctx, "plugin/use/relay", json.RawMessage(input))
				if err != nil {
					t.Fatalf("relay %s: %v", input, err)
				}
				var o relayOutcome
				if err := json.Unmarshal(out, &o); err != nil {
					t.Fatalf("relay %s: %s: %v", input, out, err)
				}
				return o
			}
			count := func(extra string) string {
				return `{"capability":"gen.numbers","method":"count",` + extra + `}`
			}

			t.Run("to the end, slowly", func(t *testing.T) {
				o := relay(ctx, count(`"input":{"n":40},"delay_ms":2`))
				if o.Error != nil || o.chunks() != strings.Join(counted(1, 40), " ") {
					t.Errorf("relay = %s %v, want 1..40", o.chunks(), o.Error)
				}
				s := <-opened
				t.Logf("the kernel held up to %d chunks (window %d)", peakChunks(s), s.Window())
				if peakChunks(s) > s.Window() || s.Window() != 16 {
					t.Errorf("the kernel held %d chunks, window %d; want at most the consumer's window 16", peakChunks(s), s.Window())
				}
			})
			t.Run("cancelled half way by the consumer", func(t *testing.T) {
				o := relay(ctx, count(`"input":{"n":100000},"take":3`))
				if o.Error != nil || o.chunks() != strings.Join(counted(1, 3), " ") {
					t.Errorf("relay = %s %v, want 1..3", o.chunks(), o.Error)
				}
				awaitNotify(t, events, "gen", "closed")
				<-opened
			})
			t.Run("cancelled half way by the producer", func(t *testing.T) {
				o := relay(ctx, count(`"input":{"n":10,"fail_at":5}`))
				if o.Error == nil || o.Error.Code != protocol.CodePluginError || o.Error.Message != "failed at chunk 5" ||
					o.chunks() != strings.Join(counted(1, 4), " ") {
					t.Errorf("relay = %s %v, want 1..4 and the producer's -32000", o.chunks(), o.Error)
				}
				<-opened
			})
			t.Run("a provider that does not stream", func(t *testing.T) {
				o := relay(ctx, `{"capability":"gen.numbers","method":"plain","input":"x"}`)
				if o.Error != nil || o.chunks() != `{"plain":"x"}` {
					t.Errorf("relay = %s %v, want the one output", o.chunks(), o.Error)
				}
				<-opened
			})
			t.Run("a host handler answers one chunk", func(t *testing.T) {
				o := relay(ctx, `{"capability":"host.log","method":"write","input":1}`)
				want := `{"caller":"use","capability":"host.log","generation":1,"input":1,"method":"write"}`
				if o.Error != nil || len(o.Chunks) != 1 || !jsonEq(o.Chunks[0], want) {
					t.Errorf("relay = %s %v, want the handler's output", o.chunks(), o.Error)
				}
			})
			t.Run("not authorized", func(t *testing.T) {
				o := relay(ctx, `{"capability":"billing","method":"charge"}`)
				if o.Error == nil || o.Error.Code != protocol.CodeNotAuthorized || len(o.Chunks) != 0 {
					t.Errorf("relay = %s %v, want -32005", o.chunks(), o.Error)
				}
			})
			t.Run("the host cancels the consumer's request", func(t *testing.T) {
				rctx, stop := context.WithCancel(ctx)
				defer stop()
				done := make(chan error, 1)
				go func() {
					_, err := k.CallProvider(rctx, "plugin/use/relay", json.RawMessage(count(`"input":{"n":100000,"notify":true},"delay_ms":5`)))
					done <- err
				}()
				awaitNotify(t, events, "gen", "sent")
				stop()
				awaitNotify(t, events, "gen", "closed")
				select {
				case err := <-done:
					if !errors.Is(err, context.Canceled) {
						t.Errorf("CallProvider = %v, want context.Canceled", err)
					}
				case <-ctx.Done():
					t.Fatal("CallProvider did not return")
				}
				<-opened
			})
			t.Run("the producer crashes", func(t *testing.T) {
				o := relay(ctx, count(`"input":{"n":10,"crash_at":3}`))
				if o.Error == nil || o.Error.Code != protocol.CodeNotAvailable || !strings.Contains(o.Error.Message, `provider "gen" crashed`) {
					t.Errorf("relay = %s %v, want -32006 naming the crash", o.chunks(), o.Error)
				}
				<-opened
			})
		})
	}
}

// jsonEq reports whether a and b hold the same JSON value.
func jsonEq(a json.RawMessage, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// peakChunks is the most chunks s held at once.
func peakChunks(s *sidecar.Stream) int {
	n, _ := s.Peak()
	return n
}

// peakBytes is the most chunk data s held at once.
func peakBytes(s *sidecar.Stream) int64 {
	_, b := s.Peak()
	return b
}
