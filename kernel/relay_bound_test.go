package kernel

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// mib formats n bytes in MiB.
func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// faultyPlug is a package running testdata/plugins/faulty in mode, with
// env added to its environment.
func faultyPlug(name, mode string, env map[string]string) plug {
	e := map[string]string{"FAULTY_MODE": mode}
	for k, v := range env {
		e[k] = v
	}
	return plug{name: name, bin: faultyBin, env: e}
}

// producerPlug is a faulty producer (stream-push or stream-windowed)
// providing key, whose method "count" is its provider "count".
func producerPlug(name, mode, key string, env map[string]string) plug {
	p := faultyPlug(name, mode, env)
	p.env["FAULTY_PROVIDERS"], p.env["FAULTY_PROVIDES"] = "count", key+"@1.0.0"
	p.provides = []string{key + "@1.0.0"}
	p.methods = map[string]map[string]string{key: {"count": "count", "get": "count"}}
	return p
}

// consumerPlug is a faulty stream-consumer asking calls ("key:method,...")
// for streams of input with the window of 1024 chunks, reading a message
// every readEvery, streams times (0: no end); it requires the keys of
// requires, optionally.
func consumerPlug(name, calls, input, readEvery string, streams int, requires ...string) plug {
	p := faultyPlug(name, "stream-consumer", map[string]string{"FAULTY_CALL": calls, "FAULTY_INPUT": input,
		"FAULTY_READ_EVERY": readEvery, "FAULTY_STREAMS": strconv.Itoa(streams)})
	for _, key := range requires {
		p.requires = append(p.requires, key+" ^1.0?")
	}
	return p
}

// startKernelSubscribed is startKernel with fn subscribed to the kernel's
// events before Start, so that it misses none a plugin causes while it
// starts; fn is unsubscribed before the kernel is closed.
func startKernelSubscribed(t *testing.T, cfg config.Config, fn func(observe.Event)) *Kernel {
	t.Helper()
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		noChildren(t)
	})
	t.Cleanup(k.Subscribe(fn))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return k
}

// notifySink returns a subscriber passing the notify events on to the
// returned channel (which holds 64).
func notifySink() (func(observe.Event), <-chan observe.Event) {
	ch := make(chan observe.Event, 64)
	return func(e observe.Event) {
		if e.Type == observe.EventNotify {
			ch <- e
		}
	}, ch
}

// streamEnd is the data of a stream-consumer's notify "stream-ended".
type streamEnd struct {
	Capability string          `json:"capability"`
	Chunks     int             `json:"chunks"`
	Bytes      int             `json:"bytes"`
	Error      *protocol.Error `json:"error"`
}

func decodeStreamEnd(t *testing.T, data json.RawMessage) streamEnd {
	t.Helper()
	var e streamEnd
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("stream-ended %s: %v", data, err)
	}
	return e
}

// TestRelayedStreamBounds holds what the kernel holds of a stream it
// relays between two plugins (capability/call asking for a stream) when
// the consumer asks for the largest window, 1024 chunks: a producer of
// protocol 1.2 (the Go SDK) relayed to a slow consumer never has more
// than stream_window_bytes and one chunk held for it by the kernel, and a
// hostile producer that pushes 64 chunks of 4 MiB at once, whatever the
// windows (of protocol 1.2, held to the byte window, and of 1.1, held to
// the window of chunks the host sizes from it), fails the consumer's call
// with a flow control error (-32603) while the host's heap stays within a
// bound far below what it pushed (256 MiB), and falls back once the
// stream ended.
func TestRelayedStreamBounds(t *testing.T) {
	for _, windowBytes := range []uint64{0, 4 << 20} {
		t.Run(fmt.Sprintf("slow consumer, stream_window_bytes %d", windowBytes), func(t *testing.T) {
			relaySlowConsumer(t, windowBytes)
		})
	}
	for _, version := range []string{"", "1.1.0"} {
		name := "hostile producer of " + protocol.Version
		if version != "" {
			name = "hostile producer of " + version
		}
		t.Run(name, func(t *testing.T) { relayHostileProducer(t, version) })
	}
}

// relaySlowConsumer relays 24 chunks of about 1 MiB from the streamer
// (protocol 1.2) to a consumer that reads a message every 20ms, under the
// stream_window_bytes windowBytes (0: the default), and checks the bytes
// the kernel held for the stream.
func relaySlowConsumer(t *testing.T, windowBytes uint64) {
	const chunks, size = 24, 1_000_000
	opened := streamHook(t)
	gen := plug{name: "gen", bin: streamerBin, provides: []string{"gen.data@1.0.0"},
		methods: map[string]map[string]string{"gen.data": {"count": "count"}}}
	use := consumerPlug("use", "gen.data:count", fmt.Sprintf(`{"n":%d,"size":%d}`, chunks, size), "20ms", 1, "gen.data")
	cfg := callConfig(writeHome(t, gen, use))
	cfg.DefaultLimits.StreamWindowBytes = windowBytes
	sink, events := notifySink()
	startKernelSubscribed(t, cfg, sink)
	end := decodeStreamEnd(t, awaitNotify(t, events, "use", "stream-ended").Data)
	if end.Error != nil || end.Chunks != chunks {
		t.Fatalf("the consumer got %d chunks and %v; want %d and no error", end.Chunks, end.Error, chunks)
	}
	s := <-opened
	window := int64(cmp.Or(windowBytes, wire.DefaultStreamWindowBytes))
	chunk := int64(size + 2) // the JSON string's quotes
	t.Logf("the kernel held up to %d bytes (%d chunks) of the stream; window %d chunks, %d bytes; chunk %d bytes",
		peakBytes(s), peakChunks(s), s.Window(), window, chunk)
	if s.Window() != wire.MaxStreamWindow {
		t.Errorf("the stream's window is %d chunks, want the consumer's %d", s.Window(), wire.MaxStreamWindow)
	}
	if peakBytes(s) > window+chunk || peakBytes(s) < chunk {
		t.Errorf("the kernel held up to %d bytes of the stream, want between one chunk (%d) and stream_window_bytes and one chunk (%d)",
			peakBytes(s), chunk, window+chunk)
	}
}

// relayHostileProducer relays from a producer answering initialize with
// version (its own, protocol.Version, when empty) that pushes 64 chunks of
// 4 MiB at once, to a consumer asking for the window of 1024 chunks, and
// checks the consumer's error and the host's heap while the producer
// pushes and after.
func relayHostileProducer(t *testing.T, version string) {
	const pushed, size = 64, 4_190_000
	env := map[string]string{}
	if version != "" {
		env["FAULTY_PROTOCOL"] = version
	}
	push := producerPlug("push", "stream-push", "push.data", env)
	use := consumerPlug("use", "push.data:count", fmt.Sprintf(`{"n":%d,"size":%d}`, pushed, size), "20ms", 1, "push.data")
	opened := streamHook(t)
	baseInuse, baseAlloc := proctest.HeapAfterGC()
	stop := proctest.SampleHeap(10 * time.Millisecond)
	sink, events := notifySink()
	startKernelSubscribed(t, callConfig(writeHome(t, push, use)), sink)
	end := decodeStreamEnd(t, awaitNotify(t, events, "use", "stream-ended").Data)
	awaitNotify(t, events, "push", "pushed") // every chunk was read by the host
	peak := stop()
	s := <-opened
	_, afterAlloc := proctest.HeapAfterGC()
	t.Logf("consumer: %d chunks, %v; the stream held up to %d bytes (%d chunks); heap: baseline %s in use, peak %s in use "+
		"(%s allocated) over %d samples while %s were pushed; %s allocated after the stream, against %s before",
		end.Chunks, end.Error, peakBytes(s), peakChunks(s), mib(baseInuse), mib(peak.InUse), mib(peak.Alloc), peak.Samples,
		mib(pushed*size), mib(afterAlloc), mib(baseAlloc))
	if end.Error == nil || end.Error.Code != wire.CodeInternalError || !strings.Contains(end.Error.Message, sidecar.ErrFlowControl.Error()) {
		t.Errorf("the consumer's call ended with %v, want -32603 for the producer's broken flow control", end.Error)
	}
	if bound := baseInuse + 64<<20; peak.InUse > bound {
		t.Errorf("the heap in use peaked at %s while the producer pushed, over the baseline %s and 64 MiB", mib(peak.InUse), mib(baseInuse))
	}
	if bound := baseAlloc + 16<<20; afterAlloc > bound {
		t.Errorf("%s allocated after the stream ended, over the baseline %s and 16 MiB: the host keeps what was pushed",
			mib(afterAlloc), mib(baseAlloc))
	}
}
