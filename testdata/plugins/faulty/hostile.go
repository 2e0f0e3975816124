package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// The hostile modes attack the host for as long as they run, concurrently
// with serving (see the package comment for each): they read stdin on
// the main goroutine, answering pings and shutdown, while a goroutine of
// their own floods. They take their parameters from the environment:
//
//	FAULTY_CALL        "capability:method,...": what slow-call-flood and
//	                   stream-consumer call, one picked at random per call
//	FAULTY_INPUT       the input of those calls (JSON; none when unset)
//	FAULTY_READ_EVERY  the pause before each read of stdin (a duration),
//	                   or "stall": stream-consumer reads nothing after its
//	                   first call
//	FAULTY_EVERY       the pause between two sends of a flood (a duration;
//	                   none when unset)
//	FAULTY_SIZE        the bytes of a notify-paced event's data (default
//	                   1 MiB)
//	FAULTY_STREAMS     how many streams stream-consumer asks for, one
//	                   after the other (0 or unset: no end)
//
// A producer mode (stream-push, stream-windowed) takes the chunks it
// sends from its provider/invoke input, as the streamer's count does:
// {"n": N, "size": S} asks for N chunks, each a JSON string of S bytes
// (default 4,190,000: the largest that fits a frame with its envelope).
var hostileModes = map[string]func(){
	"slow-call-flood": slowCallFlood,
	"stream-consumer": streamConsumer,
	"stream-push":     func() { hostileServe(pushStream) },
	"stream-windowed": windowedStreams,
	"notify-paced":    notifyFlood,
	"garbage-flood":   garbageFlood,
}

// defaultChunk is a producer's chunk size when its input names none.
const defaultChunk = 4_190_000

// envDuration returns the duration in the environment variable name, zero
// when it is unset or not a duration.
func envDuration(name string) time.Duration {
	d, _ := time.ParseDuration(os.Getenv(name))
	return d
}

// envInt returns the integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// hostileServe reads stdin until it ends, pausing FAULTY_READ_EVERY before
// each read: it answers pings and shutdown and hands every other message
// to handle.
func hostileServe(handle func(*wire.Message)) {
	pause := envDuration("FAULTY_READ_EVERY")
	for {
		if pause > 0 {
			time.Sleep(pause)
		}
		m := read()
		if m == nil {
			return
		}
		switch m.Method {
		case wire.MethodPing, wire.MethodShutdown:
			respond(m.ID, struct{}{})
		default:
			handle(m)
		}
	}
}

// serveOthers answers a host request the way serve does, and ignores
// anything else.
func serveOthers(m *wire.Message) {
	if m.IsRequest() {
		call(m)
	}
}

// callTarget is one capability/call a mode makes.
type callTarget struct{ capability, method string }

// callTargets returns FAULTY_CALL's targets; it exits without any.
func callTargets() []callTarget {
	var out []callTarget
	for _, s := range strings.Split(os.Getenv("FAULTY_CALL"), ",") {
		if k, m, ok := strings.Cut(s, ":"); ok {
			out = append(out, callTarget{k, m})
		}
	}
	if len(out) == 0 {
		fmt.Fprintln(os.Stderr, "faulty: FAULTY_CALL names no capability:method")
		os.Exit(1)
	}
	return out
}

// capabilityCall sends capability/call id to a random target, asking for
// a stream with the given window when window > 0, and returns the target.
func capabilityCall(id int64, targets []callTarget, window int) callTarget {
	t := targets[rand.IntN(len(targets))]
	p := wire.CapabilityCallParams{Capability: t.capability, Method: t.method}
	if in := os.Getenv("FAULTY_INPUT"); in != "" {
		p.Input = json.RawMessage(in)
	}
	if window > 0 {
		p.Stream = &wire.StreamParams{Window: window}
	}
	raw, _ := json.Marshal(p)
	send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: json.RawMessage(strconv.FormatInt(id, 10)),
		Method: wire.MethodCapabilityCall, Params: raw})
	return t
}

// slowCallFlood sends capability/call to FAULTY_CALL every FAULTY_EVERY,
// never waiting for an answer, while it reads its stdin every
// FAULTY_READ_EVERY: what it asks for piles up in the host's queue for
// it.
func slowCallFlood() {
	targets, every := callTargets(), envDuration("FAULTY_EVERY")
	go func() {
		for id := int64(1); ; id++ {
			capabilityCall(id, targets, 0)
			if every > 0 {
				time.Sleep(every)
			}
		}
	}()
	hostileServe(serveOthers)
}

// streamConsumer asks FAULTY_CALL for a stream with the largest window,
// 1024 chunks, and no byte window (as a consumer of protocol 1.1 asks),
// reading a message every FAULTY_READ_EVERY and acknowledging each chunk
// as it reads it; when the stream ends it sends the notify "stream-ended"
// {"capability", "chunks", "bytes", "error"} and asks for the next one,
// up to FAULTY_STREAMS streams. A call refused because the plugin is not
// yet a member of the current generation (-32008: it called while the
// host was starting it) is asked again 20ms later, and is no stream. With
// FAULTY_READ_EVERY=stall it reads nothing once its first chunk came.
func streamConsumer() {
	targets, streams := callTargets(), envInt("FAULTY_STREAMS", 0)
	stall := os.Getenv("FAULTY_READ_EVERY") == "stall"
	id, ended := int64(1), 0
	t := capabilityCall(id, targets, wire.MaxStreamWindow)
	chunks, bytes := 0, 0
	hostileServe(func(m *wire.Message) {
		switch {
		case m.Method == wire.MethodStreamChunk:
			var p wire.StreamChunkParams
			if wire.DecodeChunk(m.Params, &p) != nil || string(p.ID) != strconv.FormatInt(id, 10) {
				return
			}
			if stall {
				sleepForever()
			}
			chunks++
			bytes += len(p.Data)
			notify(wire.MethodStreamAck, wire.StreamAckParams{ID: p.ID, Seq: p.Seq})
		case m.IsResponse() && string(m.ID) == strconv.FormatInt(id, 10):
			if m.Error != nil && m.Error.Code == wire.CodeStaleGeneration {
				time.Sleep(20 * time.Millisecond)
				id++
				t = capabilityCall(id, targets, wire.MaxStreamWindow)
				return
			}
			notify(wire.MethodNotify, wire.NotifyParams{Event: "stream-ended", Data: mustJSON(map[string]any{
				"capability": t.capability, "chunks": chunks, "bytes": bytes, "error": m.Error})})
			if ended++; streams > 0 && ended >= streams {
				return
			}
			id++
			chunks, bytes = 0, 0
			t = capabilityCall(id, targets, wire.MaxStreamWindow)
		default:
			serveOthers(m)
		}
	})
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}

// production is what a producer mode was asked for: n chunks of size
// bytes, as a stream (window > 0) or as one output.
type production struct {
	id     json.RawMessage
	n      int
	size   int
	window int
}

// productionOf reads a provider/invoke's params.
func productionOf(m *wire.Message) production {
	var p wire.ProviderInvokeParams
	_ = json.Unmarshal(m.Params, &p)
	in := struct{ N, Size int }{N: 1, Size: defaultChunk}
	_ = json.Unmarshal(p.Input, &in)
	pr := production{id: m.ID, n: in.N, size: in.Size}
	if p.Stream != nil {
		pr.window = p.Stream.Window
	}
	return pr
}

// chunk writes chunk seq of pr in the layout the Go SDK writes.
func (pr production) chunk(seq int, data string) {
	frame := `{"jsonrpc":"2.0","method":"$/stream/chunk","params":{"id":` + string(pr.id) +
		`,"seq":` + strconv.Itoa(seq) + `,"data":` + data + `}}`
	if err := out.WriteFrame([]byte(frame)); err != nil {
		os.Exit(1)
	}
}

// blob returns a JSON string of size bytes, quotes included.
func blob(size int) string {
	return `"` + strings.Repeat("x", max(size-2, 0)) + `"`
}

// pushStream answers a provider/invoke asking for a stream by sending all
// its chunks at once, whatever the windows, then {} and the notify
// "pushed" (data: the number of chunks); one asking for none with its
// input, as serve does.
func pushStream(m *wire.Message) {
	if m.Method != wire.MethodProviderInvoke {
		serveOthers(m)
		return
	}
	pr := productionOf(m)
	if pr.window == 0 {
		call(m)
		return
	}
	data := blob(pr.size)
	for seq := 1; seq <= pr.n; seq++ {
		pr.chunk(seq, data)
	}
	respond(m.ID, struct{}{})
	notify(wire.MethodNotify, wire.NotifyParams{Event: "pushed", Data: mustJSON(pr.n)})
}

// windowedStreams answers each provider/invoke asking for a stream with
// its chunks, honouring the window of chunks (a goroutine per stream
// waits for the host's acks) but not window_bytes, as a producer of
// protocol 1.1 does; it stops a stream the host cancels.
func windowedStreams() {
	var mu sync.Mutex
	credits := map[string]*credit{} // by request id
	hostileServe(func(m *wire.Message) {
		switch m.Method {
		case wire.MethodProviderInvoke:
			pr := productionOf(m)
			if pr.window == 0 {
				call(m)
				return
			}
			c := &credit{more: make(chan struct{}, 1)}
			mu.Lock()
			credits[string(m.ID)] = c
			mu.Unlock()
			go func() {
				produceWindowed(pr, c)
				mu.Lock()
				delete(credits, string(pr.id))
				mu.Unlock()
			}()
		case wire.MethodStreamAck, wire.MethodCancel:
			var p wire.StreamAckParams
			if json.Unmarshal(m.Params, &p) != nil {
				return
			}
			mu.Lock()
			c := credits[string(p.ID)]
			mu.Unlock()
			if c != nil {
				c.grant(p.Seq, m.Method == wire.MethodCancel)
			}
		default:
			serveOthers(m)
		}
	})
}

// credit is what the host granted one stream: the highest ack, and
// whether it cancelled the stream.
type credit struct {
	mu        sync.Mutex
	acked     int64
	cancelled bool
	more      chan struct{} // signalled after each grant (capacity 1)
}

func (c *credit) grant(seq int64, cancel bool) {
	c.mu.Lock()
	c.acked = max(c.acked, seq)
	c.cancelled = c.cancelled || cancel
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
}

// await waits until chunk seq is within the window, and reports false if
// the stream was cancelled first.
func (c *credit) await(seq, window int64) bool {
	for {
		c.mu.Lock()
		ok, cancelled := seq <= c.acked+window, c.cancelled
		c.mu.Unlock()
		switch {
		case cancelled:
			return false
		case ok:
			return true
		}
		<-c.more
	}
}

// produceWindowed sends pr's chunks while seq ≤ acked + window, then
// answers {}; a cancelled stream ends with -32800.
func produceWindowed(pr production, c *credit) {
	data := blob(pr.size)
	for seq := 1; seq <= pr.n; seq++ {
		if !c.await(int64(seq), int64(pr.window)) {
			send(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: pr.id,
				Error: &protocol.Error{Code: protocol.CodeRequestCancelled, Message: "cancelled"}})
			return
		}
		pr.chunk(seq, data)
	}
	respond(pr.id, struct{}{})
}

// notifyFlood sends the notify "flood" with FAULTY_SIZE bytes of data
// every FAULTY_EVERY, while it serves.
func notifyFlood() {
	every := envDuration("FAULTY_EVERY")
	frame := []byte(`{"jsonrpc":"2.0","method":"notify","params":{"event":"flood","data":` +
		blob(envInt("FAULTY_SIZE", 1<<20)) + `}}`)
	go func() {
		for {
			if err := out.WriteFrame(frame); err != nil {
				os.Exit(1)
			}
			if every > 0 {
				time.Sleep(every)
			}
		}
	}()
	hostileServe(serveOthers)
}

// garbageFlood sends, every FAULTY_EVERY, a malformed message (garbage),
// a log notification at warn and a line on stderr, so that malformed ones
// never outnumber well-formed ones; and every 3 seconds 110 malformed
// messages in a row, more than the host's default limit (100), for which
// it is stopped.
func garbageFlood() {
	every := envDuration("FAULTY_EVERY")
	go func() {
		burst := time.Now().Add(3 * time.Second)
		for i := 0; ; i++ {
			if time.Now().After(burst) {
				for j := range 110 {
					send(garbage(j))
				}
				burst = time.Now().Add(3 * time.Second)
			}
			send(garbage(i))
			notify(wire.MethodLog, wire.LogParams{Level: "warn", Message: "between the garbage", Fields: map[string]any{"i": i}})
			fmt.Fprintf(os.Stderr, "garbage-flood: stderr line %d\n", i)
			if every > 0 {
				time.Sleep(every)
			}
		}
	}()
	hostileServe(serveOthers)
}
