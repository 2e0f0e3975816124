package admin_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/admin"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestSlowClient: a client that asks to follow the logs and never reads
// is dropped, whether its follower falls behind first (the stream ends
// with a too_slow line) or a write to it times out first (the connection
// ends); the log sink never blocks on it, other clients are served, and
// the server closes in time.
func TestSlowClient(t *testing.T) {
	tests := []struct {
		name     string
		buffer   int
		bytes    int64         // the follower's byte bound
		timeout  time.Duration // of each write
		wantLine string        // the stream's last line; "" when the connection breaks
	}{
		// The writes wait for the client, which reads once the sink is
		// done: by then the follower was dropped.
		{name: "falls-behind", buffer: 4, timeout: waitLimit, wantLine: `{"error":{"code":"too_slow"`},
		// The same, the follower's bytes reached first (16 lines of 4 KiB).
		{name: "falls-behind-bytes", buffer: 20000, bytes: 64 << 10, timeout: waitLimit,
			wantLine: `{"error":{"code":"too_slow","message":"dropped: the client fell 20000 lines or 64 KiB behind`},
		// A write times out; the follower's buffer holds every line.
		{name: "write-timeout", buffer: 20000, bytes: 1 << 30, timeout: 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			notes := &signalWriter{want: "stream write failed", seen: make(chan struct{})}
			f := start(t, admin.Options{FollowBuffer: tt.buffer, FollowBytes: tt.bytes, WriteTimeout: tt.timeout,
				Logger: hclog.New(&hclog.LoggerOptions{Output: notes, Level: hclog.Debug})})
			conn, err := net.Dial("unix", f.ln.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte("GET /v1/logs?follow=true HTTP/1.1\r\nHost: admin\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
			// The answer's header comes once the follower is registered;
			// after it, the client reads nothing until the sink is done.
			conn.SetReadDeadline(time.Now().Add(waitLimit))
			resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 16), nil)
			if err != nil {
				t.Fatal(err)
			}
			line := strings.Repeat("x", 4<<10)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 10000 { // 40 MB: far more than any socket buffer
					f.ring.Accept("test.audit", hclog.Info, line)
				}
			}()
			select {
			case <-done:
			case <-time.After(waitLimit):
				t.Fatal("the log sink blocked on a client that does not read")
			}
			if tt.wantLine == "" {
				select { // the write timed out while the client read nothing
				case <-notes.seen:
				case <-time.After(waitLimit):
					t.Fatal("no write to the slow client timed out")
				}
			}
			// Now read what the server sent: the stream ended either way.
			data, err := io.ReadAll(resp.Body)
			switch {
			case tt.wantLine != "":
				if err != nil {
					t.Fatalf("reading the stream: %v", err)
				}
				lines := strings.Split(strings.TrimSpace(string(data)), "\n")
				if last := lines[len(lines)-1]; !strings.HasPrefix(last, tt.wantLine) {
					t.Errorf("last line = %.200s, want %s...", last, tt.wantLine)
				}
			case err == nil:
				t.Errorf("the stream ended cleanly; want the connection broken by the write timeout")
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
			defer cancel()
			st, err := f.c.Status(ctx)
			if err != nil {
				t.Fatalf("status after the slow client: %v", err)
			}
			for _, p := range st.Plugins {
				if p.State != "ready" {
					t.Errorf("plugin %s is %s after the slow client", p.Name, p.State)
				}
			}
			closeCtx, cancelClose := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancelClose()
			if err := f.srv.Close(closeCtx); err != nil {
				t.Errorf("Close with a slow client connected: %v", err)
			}
		})
	}
}

// TestCloseEndsStreams: Close ends follow streams of logs and events, and
// is idempotent.
func TestCloseEndsStreams(t *testing.T) {
	f := start(t, admin.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	opened := make(chan struct{}, 2)
	ended := make(chan error, 2)
	go func() {
		first := true
		ended <- f.c.Events(ctx, admin.EventsRequest{Follow: true}, func(admin.EventLine) error {
			if first {
				first = false
				opened <- struct{}{}
			}
			return nil
		})
	}()
	f.ring.Accept("test.memory", hclog.Warn, "kept")
	go func() {
		first := true
		ended <- f.c.Logs(ctx, admin.LogsRequest{Follow: true}, func(admin.LogLine) error {
			if first {
				first = false
				opened <- struct{}{}
			}
			return nil
		})
	}()
	for range 2 {
		select {
		case <-opened:
		case <-ctx.Done():
			t.Fatal("the streams did not open")
		}
	}
	for range 2 { // idempotent
		if err := f.srv.Close(ctx); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	for range 2 {
		select {
		case err := <-ended:
			if ctx.Err() != nil {
				t.Fatalf("a stream ended only with the test's context: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("a follow stream outlived Close")
		}
	}
	ln, err := admin.Listen(socketPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Serve(ln); !errors.Is(err, admin.ErrServerClosed) {
		t.Errorf("Serve after Close = %v, want ErrServerClosed", err)
	}
}

// signalWriter closes seen when a write contains want.
type signalWriter struct {
	mu   sync.Mutex
	want string
	seen chan struct{}
	done bool
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && strings.Contains(string(p), w.want) {
		w.done = true
		close(w.seen)
	}
	return len(p), nil
}

// TestStatusConfinement: each running plugin's confinement is in the
// status answer; what this machine enforces varies, its mode does not.
func TestStatusConfinement(t *testing.T) {
	f := start(t, admin.Options{}, func(c *config.Config) {
		c.Confinement = config.Confinement{Packages: map[string]string{"kvstore": pluginpkg.ConfineBestEffort}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	st, err := f.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Plugins {
		c := p.Confinement
		switch {
		case c == nil:
			t.Errorf("%s: no confinement", p.Name)
		case p.Name == "kvstore" && (c.Mode != pluginpkg.ConfineBestEffort || !strings.Contains(c.Mechanism, "no_new_privs")):
			t.Errorf("kvstore: %+v", c)
		case p.Name != "kvstore" && !reflect.DeepEqual(c, &admin.Confinement{Mode: pluginpkg.ConfineOff}):
			t.Errorf("%s: %+v", p.Name, c)
		}
	}
}

// TestLogsPlugin: GET /v1/logs?plugin= takes a member of the generation
// (declarative ones included), the kernel and a plugin with lines kept,
// and refuses any other name, a typo most likely, naming the closest.
func TestLogsPlugin(t *testing.T) {
	f := start(t, admin.Options{})
	for _, tt := range []struct {
		plugin string
		want   reply
	}{
		{"audit", reply{status: 200}},
		{"themes", reply{status: 200}},
		{"kernel", reply{status: 200}},
		{"memroy", reply{status: 404, code: admin.CodeUnknownPlugin,
			message: `unknown plugin "memroy": no member of generation 1, and no lines kept for it (did you mean "memory"?)`}},
		{"zzz", reply{status: 404, code: admin.CodeUnknownPlugin,
			message: `unknown plugin "zzz": no member of generation 1, and no lines kept for it`}},
	} {
		if got := f.rawRequest(t, "GET", "/v1/logs?plugin="+tt.plugin, ""); got != tt.want {
			t.Errorf("plugin=%s: got %+v, want %+v", tt.plugin, got, tt.want)
		}
	}
}

// TestEventsFilter: GET /v1/events keeps the events of the plugins and
// types asked for (repeated or comma-separated), kept and followed alike;
// an unknown type or plugin is refused.
func TestEventsFilter(t *testing.T) {
	f := start(t, admin.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var got []admin.EventLine
	req := admin.EventsRequest{Plugins: []string{"memory"}, Types: []string{"plugin-state,plugin"}}
	if err := f.c.Events(ctx, req, func(l admin.EventLine) error { got = append(got, l); return nil }); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, l := range got {
		seen = append(seen, l.Type+" "+l.Plugin+" "+l.State)
	}
	want := []string{"plugin-state memory starting", "plugin memory ready", "plugin-state memory ready"} // one event per change
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("events of memory's start = %q, want %q", seen, want)
	}
	for _, tt := range []struct {
		query string
		want  reply
	}{
		{"type=crash", reply{status: 400, code: admin.CodeBadRequest,
			message: `type="crash" is not an event type (types: audit, bake, build-failed, generation-published, notify, plugin, plugin-crashed, plugin-state, warning)`}},
		{"type=warnings", reply{status: 400, code: admin.CodeBadRequest,
			message: `type="warnings" is not an event type (did you mean "warning"?) (types: audit, bake, build-failed, generation-published, notify, plugin, plugin-crashed, plugin-state, warning)`}},
		{"plugin=memroy", reply{status: 404, code: admin.CodeUnknownPlugin,
			message: `unknown plugin "memroy": no member of generation 1, and no events kept for it (did you mean "memory"?)`}},
		{"plugin=kernel&type=generation-published", reply{status: 200}},
	} {
		if got := f.rawRequest(t, "GET", "/v1/events?"+tt.query, ""); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.query, got, tt.want)
		}
	}
}
