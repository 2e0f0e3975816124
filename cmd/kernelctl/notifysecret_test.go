//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
)

// TestNotifySecretRedacted: the leaky plugin (faulty, leak-secret) sends
// a notify whose event name and data hold a configured secret. A running
// kernelctl prints the name redacted; `kernelctl events` and GET
// /v1/events, kept and followed, show the name and the data redacted and
// neither half of the secret; the Go host's own Subscribe callback
// receives the name redacted and the data raw, as the kernel documents.
func TestNotifySecretRedacted(t *testing.T) {
	const secret = "hunter2-SECRET-notify-4711"
	home, config := leakHome(t, secret)
	cmd, stdout, stderr, exited := startKernelctl(t, "run", "--config", config)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	// Follow the events, then make the plugin notify: the notify line
	// reaches the follower live.
	opened, followed := make(chan struct{}), make(chan string, 1)
	go func() { followed <- followNotify(ctx, home, opened) }()
	select {
	case <-opened:
	case <-ctx.Done():
		t.Fatal("GET /v1/events?follow=true did not answer")
	}
	var callOut, callErr syncBuffer
	if code := run([]string{"call", "provider", "plugin/leaky/quiet", "--config", config}, &callOut, &callErr); code != exitOK {
		t.Fatalf("call: exit %d: %s", code, callErr.String())
	}
	follow := <-followed

	var eventsOut, eventsErr syncBuffer
	if code := run([]string{"events", "--config", config}, &eventsOut, &eventsErr); code != exitOK {
		t.Fatalf("events: exit %d: %s", code, eventsErr.String())
	}
	kept := getEvents(t, home)
	stdout.waitFor(t, "notify leaky: leak [REDACTED]\n")

	wantLine := `"plugin":"leaky","name":"leak [REDACTED]","data":"[REDACTED]"}`
	for what, text := range map[string]string{"kernelctl events": eventsOut.String(), "GET /v1/events": kept,
		"GET /v1/events?follow=true": follow, "kernelctl run": stdout.String() + stderr.String()} {
		for _, leak := range []string{secret, secret[:len(secret)/2], secret[len(secret)/2:]} {
			if strings.Contains(text, leak) {
				t.Errorf("%s shows %q:\n%s", what, leak, text)
			}
		}
		if what != "kernelctl run" && !strings.Contains(text, wantLine) {
			t.Errorf("%s has no line ending %s:\n%s", what, wantLine, text)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("kernelctl: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(waitLimit):
		t.Fatal("kernelctl did not exit after SIGTERM")
	}

	// The Go host: the data as the plugin sent it.
	name, data := hostNotify(t, config)
	if name != "leak [REDACTED]" || string(data) != strconv.Quote(secret) {
		t.Errorf("Subscribe got the notify %q with data %s; want the name redacted and the data raw", name, data)
	}
}

// followNotify follows GET /v1/events over a raw connection until a
// notify line, and returns every line read ("" on failure). It closes
// opened once the server answered, its follower registered.
func followNotify(ctx context.Context, home string, opened chan<- struct{}) string {
	resp, err := rawGet(ctx, home, "/v1/events?follow=true")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	close(opened)
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `"type":"notify"`) {
			break
		}
	}
	return b.String()
}

// getEvents returns the body of GET /v1/events.
func getEvents(t *testing.T, home string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	resp, err := rawGet(ctx, home, "/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// rawGet sends GET path to home's admin socket.
func rawGet(ctx context.Context, home, path string) (*http.Response, error) {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", adminSocket(home))
		}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://admin"+path, nil)
	if err != nil {
		return nil, err
	}
	return hc.Do(req)
}

// hostNotify runs a kernel on config in this process, as a Go host does,
// and returns the leaky plugin's notify as its Subscribe callback received
// it.
func hostNotify(t *testing.T, configPath string) (string, json.RawMessage) {
	t.Helper()
	cfg, err := config.Load(configPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = hclog.NewNullLogger()
	k, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	notes := make(chan observe.Event, 16)
	k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventNotify && e.Plugin == "leaky" {
			notes <- e
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	defer k.Close(context.Background())
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := k.CallProvider(ctx, "plugin/leaky/quiet", nil); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	select {
	case e := <-notes:
		return e.Name, e.Data
	case <-ctx.Done():
		t.Fatal("no notify from the leaky plugin")
	}
	return "", nil
}
