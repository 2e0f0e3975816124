package sdk

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"log/slog"

	"go.uber.org/goleak"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// TestMain runs the tests, or serves the caller plugin when the test
// binary was started as one (see serveCallerHelper).
func TestMain(m *testing.M) {
	serveCallerHelper()
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait in these tests; nothing should come near it.
const waitLimit = 10 * time.Second

// withBounds makes the sessions the test starts run with b, and restores
// the defaults after the test (and after its ServeIO runs ended, whose
// cleanups, registered later, run first).
func withBounds(t *testing.T, b bounds) {
	t.Helper()
	old := sessionBounds
	sessionBounds = b
	t.Cleanup(func() { sessionBounds = old })
}

// harness plays the host against a Plugin served in-process over pipes.
type harness struct {
	t      *testing.T
	inR    *io.PipeReader // the plugin's stdin
	inW    *io.PipeWriter
	outR   *io.PipeReader // the plugin's stdout
	fw     *wire.FrameWriter
	msgs   chan *wire.Message
	done   chan error
	cancel context.CancelFunc

	once sync.Once
	err  error
}

// serve starts p.ServeIO and registers a cleanup that ends it and checks
// that it returned.
func serve(t *testing.T, p *Plugin) *harness {
	t.Helper()
	p.SetLogger(slog.New(hclogJSON(testWriter{t}, p.name, slog.LevelDebug)))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, inR: inR, inW: inW, outR: outR, fw: wire.NewFrameWriter(inW),
		msgs: make(chan *wire.Message, 64), done: make(chan error, 1), cancel: cancel}
	go func() {
		err := p.ServeIO(ctx, inR, outW)
		outW.Close()
		h.done <- err
	}()
	go func() {
		defer close(h.msgs)
		fr := wire.NewFrameReader(outR, 0)
		for {
			m, err := fr.ReadMessage()
			if err != nil {
				return
			}
			h.msgs <- m
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		h.wait()
		inR.Close() // unblocks a write the plugin never read
		cancel()
		outR.Close()
		for range h.msgs {
		}
	})
	return h
}

// testWriter sends the plugin's log to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// wait returns ServeIO's error, failing the test if it does not return.
func (h *harness) wait() error {
	h.once.Do(func() {
		select {
		case h.err = <-h.done:
		case <-time.After(waitLimit):
			h.t.Fatal("ServeIO did not return")
		}
	})
	return h.err
}

// returned reports whether ServeIO has returned, without waiting.
func (h *harness) returned() bool {
	select {
	case err := <-h.done:
		h.once.Do(func() { h.err = err })
		return true
	default:
		return false
	}
}

func (h *harness) send(m *wire.Message) {
	h.t.Helper()
	if err := h.fw.WriteMessage(m); err != nil {
		h.t.Fatalf("send %s: %v", m.Method, err)
	}
}

// call sends request id with method and params (marshalled unless they are
// a json.RawMessage).
func (h *harness) call(id int, method string, params any) {
	h.t.Helper()
	m, err := newRequest(json.RawMessage(strconv.Itoa(id)), method, params)
	if err != nil {
		h.t.Fatal(err)
	}
	h.send(m)
}

// newRequest returns a request with id, method and params, marshalled
// (nil params are omitted).
func newRequest(id json.RawMessage, method string, params any) (*wire.Message, error) {
	m, err := wire.NewNotification(method, params)
	if err != nil {
		return nil, err
	}
	m.ID = id
	return m, nil
}

func (h *harness) cancelCall(id int) {
	h.t.Helper()
	m, err := wire.NewNotification(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(strconv.Itoa(id))})
	if err != nil {
		h.t.Fatal(err)
	}
	h.send(m)
}

// recv returns the next message the plugin wrote.
func (h *harness) recv() *wire.Message {
	h.t.Helper()
	select {
	case m, ok := <-h.msgs:
		if !ok {
			h.t.Fatal("plugin output ended")
		}
		return m
	case <-time.After(waitLimit):
		h.t.Fatal("no message from the plugin")
	}
	return nil
}

// response returns the next message, checking it answers id.
func (h *harness) response(id int) *wire.Message {
	h.t.Helper()
	m := h.recv()
	if string(m.ID) != strconv.Itoa(id) {
		h.t.Fatalf("got %s, want the response to %d", frame(m), id)
	}
	return m
}

// result checks that the next message answers id successfully with want
// (compact JSON).
func (h *harness) result(id int, want string) {
	h.t.Helper()
	m := h.response(id)
	if m.Error != nil || string(m.Result) != want {
		h.t.Fatalf("response %d = %s, want result %s", id, frame(m), want)
	}
}

// error checks that the next message answers id with code and a message
// containing msg.
func (h *harness) error(id, code int, msg string) {
	h.t.Helper()
	m := h.response(id)
	if m.Error == nil || m.Error.Code != code || !strings.Contains(m.Error.Message, msg) {
		h.t.Fatalf("response %d = %s, want error %d containing %q", id, frame(m), code, msg)
	}
}

func (h *harness) initialize(id int) *protocol.InitializeResult {
	h.t.Helper()
	h.call(id, wire.MethodInitialize, initParams(protocol.Version))
	m := h.response(id)
	if m.Error != nil {
		h.t.Fatalf("initialize: %v", m.Error)
	}
	var res protocol.InitializeResult
	if err := json.Unmarshal(m.Result, &res); err != nil {
		h.t.Fatal(err)
	}
	return &res
}

// initParams returns the params of initialize from a host of version:
// one of 1.4 or later announces every feature.
func initParams(version string) protocol.InitializeParams {
	p := protocol.InitializeParams{
		ProtocolVersion: version,
		Host:            protocol.HostInfo{Name: "testhost", Version: "0.1.0"},
		Plugin:          protocol.PluginInfo{Name: "tester", Version: "1.0.0", DataDir: "/tmp/data"},
		Config:          json.RawMessage(`{"mode":"strict"}`),
	}
	if wire.Announces(version) {
		p.Features = wire.AllFeatures.Names()
	}
	return p
}

func frame(m *wire.Message) string {
	b, _ := json.Marshal(m)
	return string(b)
}
