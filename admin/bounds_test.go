package admin_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/admin"
)

// bound is the header, body and idle timeout of the tests below: short,
// since they wait for it; every wait for its effect is bounded by
// waitLimit only.
const bound = 200 * time.Millisecond

// TestSlowClientsDisconnected: a client that sends its header byte by
// byte, one that sends its body byte by byte, and one that keeps its
// connection alive and sends nothing more are each disconnected (the slow
// body with a request_timeout answer first), and the server goes on
// serving.
func TestSlowClientsDisconnected(t *testing.T) {
	f := start(t, admin.Options{HeaderTimeout: bound, BodyTimeout: bound, IdleTimeout: bound})
	tests := []struct {
		name string
		// head is sent at once, then trickle byte by byte.
		head, trickle string
		// wantStatus is the answer before the connection ends; 0 for
		// any or none.
		wantStatus int
		wantCode   string
	}{
		{name: "header", trickle: "GET /v1/version HTTP/1.1\r\nHost: admin\r\nX-Slow: " + strings.Repeat("x", 1<<16)},
		{name: "body", head: "POST /v1/call HTTP/1.1\r\nHost: admin\r\nContent-Type: application/json\r\nContent-Length: 65536\r\n\r\n",
			trickle: `{"kind": "provider", "target": "` + strings.Repeat("x", 1<<16), wantStatus: http.StatusRequestTimeout, wantCode: `"code": "request_timeout"`},
		{name: "idle", head: "GET /v1/version HTTP/1.1\r\nHost: admin\r\n\r\n", wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("unix", f.ln.Path)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, tt.head); err != nil {
				t.Fatal(err)
			}
			stop := trickle(conn, tt.trickle)
			defer stop()
			conn.SetReadDeadline(time.Now().Add(waitLimit))
			br := bufio.NewReader(conn)
			if tt.wantStatus != 0 {
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatalf("reading the answer: %v", err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.wantStatus || !strings.Contains(string(body), tt.wantCode) {
					t.Errorf("answer %d %s, want %d with %s", resp.StatusCode, body, tt.wantStatus, tt.wantCode)
				}
			}
			// Whatever else comes (net/http answers a header cut short
			// with a 400), the connection ends.
			if _, err := io.Copy(io.Discard, br); errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("still connected after %v", waitLimit)
			}
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := f.c.Version(ctx); err != nil {
		t.Errorf("a request after the slow clients: %v", err)
	}
}

// trickle writes s to conn one byte every bound/10 until it is written,
// a write fails or stop is called; stop waits for it.
func trickle(conn net.Conn, s string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(bound / 10)
		defer tick.Stop()
		for i := range len(s) {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if _, err := conn.Write([]byte{s[i]}); err != nil {
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// TestBodyDeadlineEndsWithBody: the body's read deadline ends once the
// body is read, so a stream whose request had a body outlives it (a read
// deadline that fired on the connection would cancel the request's
// context and end the stream).
func TestBodyDeadlineEndsWithBody(t *testing.T) {
	f := start(t, admin.Options{BodyTimeout: bound})
	conn, err := net.Dial("unix", f.ln.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /v1/logs?follow=true HTTP/1.1\r\nHost: admin\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(waitLimit))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("follow: %v %v", resp, err)
	}
	<-time.After(5 * bound) // well past the body's deadline
	f.ring.Accept("test.audit", hclog.Info, "after the body's deadline")
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if strings.Contains(lines.Text(), "after the body's deadline") {
			return
		}
	}
	t.Fatalf("the stream ended before the line came: %v", lines.Err())
}

// TestMaxConns: with MaxConns connections open, the server accepts no
// other; the requests sent on more connections are answered once the
// first ones close, and a normal request still succeeds.
func TestMaxConns(t *testing.T) {
	const maxConns, extra = 4, 3
	f := start(t, admin.Options{MaxConns: maxConns, HeaderTimeout: waitLimit, IdleTimeout: waitLimit})
	type client struct {
		conn net.Conn
		br   *bufio.Reader
	}
	dial := func(t *testing.T) client {
		t.Helper()
		conn, err := net.Dial("unix", f.ln.Path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if _, err := io.WriteString(conn, "GET /v1/version HTTP/1.1\r\nHost: admin\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		return client{conn, bufio.NewReader(conn)}
	}
	answered := func(t *testing.T, c client) {
		t.Helper()
		c.conn.SetReadDeadline(time.Now().Add(waitLimit))
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			t.Fatalf("reading the answer: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("answer %d, want 200", resp.StatusCode)
		}
	}
	// Fill the cap with connections kept alive after one request each.
	var held []client
	for range maxConns {
		c := dial(t)
		answered(t, c)
		held = append(held, c)
	}
	// More connections, each with a request: none is accepted while the
	// first ones are open.
	var over []client
	for range extra {
		over = append(over, dial(t))
	}
	if n := admin.ConnsServed(f.srv); n != maxConns {
		t.Errorf("%d connections served, want %d", n, maxConns)
	}
	// A negative check: with a broken cap it may pass on a slow machine,
	// with a working one it never fails.
	for i, c := range over {
		c.conn.SetReadDeadline(time.Now().Add(bound))
		if _, err := c.br.Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("connection %d over the cap: read %v, want no answer yet", i, err)
		}
	}
	if n := admin.ConnsServed(f.srv); n != maxConns {
		t.Errorf("%d connections served, want %d", n, maxConns)
	}
	for _, c := range held {
		c.conn.Close()
	}
	for _, c := range over {
		answered(t, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := f.c.Version(ctx); err != nil {
		t.Errorf("a request after the connections over the cap: %v", err)
	}
}
