package admin_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/admin"
)

// TestGoldenAnswers drives every endpoint of a served demo kernel, in
// order, and compares each answer (volatile values replaced) with
// testdata/<name>.json. Run with -update to rewrite them.
func TestGoldenAnswers(t *testing.T) {
	stops := make(chan struct{}, 8) // OnStop runs on the handler's goroutine once the answer is flushed
	f := start(t, admin.Options{Version: "v1.2.3", ConfigPath: "/etc/extkernel/kernel.json", OnStop: func() { stops <- struct{}{} }})
	big := `{"kind":"provider","target":"plugin/kvstore/put","input":"` + strings.Repeat("x", 1<<20) + `"}`
	steps := []struct {
		name         string
		method, path string
		body         string
		setup        func(t *testing.T)
		want         int
	}{
		{name: "version", method: "GET", path: "/v1/version", want: 200},
		{name: "status", method: "GET", path: "/v1/status", want: 200},
		{name: "plugins", method: "GET", path: "/v1/plugins", want: 200},
		{name: "plan", method: "GET", path: "/v1/plan", want: 200},
		{name: "contributions-plugin", method: "GET", path: "/v1/contributions?plugin=kvstore", want: 200},
		{name: "call-provider", method: "POST", path: "/v1/call", want: 200,
			body: `{"kind": "provider", "target": "plugin/kvstore/put", "input": {"key": "greeting", "value": "hello"}}`},
		{name: "call-provider-get", method: "POST", path: "/v1/call", want: 200,
			body: `{"kind": "provider", "target": "plugin/kvstore/get", "input": "greeting"}`},
		{name: "call-action", method: "POST", path: "/v1/call", want: 200,
			body: `{"kind": "action", "target": "plugin/memory/forget"}`},
		{name: "call-strategy", method: "POST", path: "/v1/call", want: 200,
			body: `{"kind": "strategy", "target": "context.compactor", "input": [1, 2, 3, 4, 5]}`},
		{name: "call-intercept", method: "POST", path: "/v1/call", want: 200,
			body: `{"kind": "intercept", "target": "tool.before", "input": {"cmd": "curl -H sk-abcdefghijkl"}}`},
		{name: "call-plugin-error", method: "POST", path: "/v1/call", want: 502,
			body: `{"kind": "provider", "target": "plugin/kvstore/get", "input": {"not": "a key"}}`},
		{name: "call-unknown-target", method: "POST", path: "/v1/call", want: 404,
			body: `{"kind": "provider", "target": "plugin/kvstore/nosuch"}`},
		{name: "call-unknown-point", method: "POST", path: "/v1/call", want: 404, body: `{"kind": "intercept", "target": "tool.befor"}`},
		{name: "call-unknown-slot", method: "POST", path: "/v1/call", want: 404, body: `{"kind": "strategy", "target": "context.compacter"}`},
		{name: "call-unknown-provider", method: "POST", path: "/v1/call", want: 404, body: `{"kind": "provider", "target": "plugin/kvstore/gett"}`},
		{name: "call-bad-kind", method: "POST", path: "/v1/call", want: 400, body: `{"kind": "slot", "target": "x"}`},
		{name: "call-invalid-json", method: "POST", path: "/v1/call", want: 400, body: `{"kind": "provider",`},
		{name: "call-unknown-field", method: "POST", path: "/v1/call", want: 400, body: `{"kind": "provider", "targt": "x"}`},
		{name: "call-too-large", method: "POST", path: "/v1/call", want: 413, body: big},
		{name: "unknown-path", method: "GET", path: "/v1/nosuch", want: 404},
		{name: "logs-unknown-plugin", method: "GET", path: "/v1/logs?plugin=audt", want: 404},
		{name: "method-not-allowed", method: "DELETE", path: "/v1/status", want: 405},
		{name: "restart-unknown", method: "POST", path: "/v1/plugins/nosuch/restart", want: 404},
		{name: "restart", method: "POST", path: "/v1/plugins/memory/restart", want: 200},
		{name: "reload-nochange", method: "POST", path: "/v1/reload", want: 200},
		{name: "reload", method: "POST", path: "/v1/reload", want: 200, setup: func(t *testing.T) {
			writeFile(t, filepath.Join(f.home, "state.json"), `{"format": 1, "packages": {"kvstore-next": {"enabled": false}, "audit": {"enabled": false}}}`)
		}},
		{name: "reload-rolled-back", method: "POST", path: "/v1/reload", want: 409, setup: func(t *testing.T) {
			writeFile(t, filepath.Join(f.home, "packages", "redactor", "plugin.json"), `{"format": 1, "name": "redactor",`)
		}},
		{name: "stop-body", method: "POST", path: "/v1/stop", want: 400, body: `{"now": true}`},
		{name: "stop", method: "POST", path: "/v1/stop", want: 200},
	}
	for _, st := range steps {
		if !t.Run(st.name, func(t *testing.T) {
			if st.setup != nil {
				st.setup(t)
			}
			code, body := f.request(t, st.method, st.path, st.body)
			if code != st.want {
				t.Errorf("HTTP %d, want %d:\n%s", code, st.want, body)
			}
			checkGolden(t, st.name, normalize(body, f.home))
		}) {
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	select {
	case <-stops:
	case <-ctx.Done():
		t.Fatal("POST /v1/stop did not call OnStop")
	}
	// Nothing the bad requests asked disturbed the kernel (the test's
	// OnStop stops nothing), and the stop with a body called no OnStop.
	st, err := f.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Generation.Number != 3 || len(st.Plugins) != 3 {
		t.Errorf("after the requests: generation %d with %d plugins, want 3 with 3", st.Generation.Number, len(st.Plugins))
	}
	for _, p := range st.Plugins {
		if p.State != "ready" {
			t.Errorf("after the requests: %s is %s", p.Name, p.State)
		}
	}
	if n := len(stops); n != 0 {
		t.Errorf("OnStop called %d more times, want once", n)
	}
}

// TestGoldenStreams checks a logs line and the events of a restart.
func TestGoldenStreams(t *testing.T) {
	f := start(t, admin.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	t.Run("logs", func(t *testing.T) {
		resp := f.stream(t, ctx, "/v1/logs?plugin=audit&follow=true")
		defer resp.Body.Close()
		if _, err := f.c.Call(ctx, admin.CallRequest{Kind: admin.KindIntercept, Target: "tool.after", Input: json.RawMessage(`{"tool":"ls"}`)}); err != nil {
			t.Fatal(err)
		}
		line := readUntil(t, resp, `"tool call recorded"`)
		checkGolden(t, "logs", normalize(line, f.home))
	})

	t.Run("events", func(t *testing.T) {
		resp := f.stream(t, ctx, "/v1/events?follow=true")
		defer resp.Body.Close()
		if _, err := f.c.Restart(ctx, "memory"); err != nil {
			t.Fatal(err)
		}
		var lines [][]byte
		sc := bufio.NewScanner(resp.Body)
		found := false
		for !found && sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			lines = append(lines, line)
			found = bytes.Contains(line, []byte(`"type":"generation-published","generation":2`))
		}
		if !found {
			t.Fatalf("no generation-published event for generation 2: %v", sc.Err())
		}
		// The kept events of the start come first, in an order that
		// depends on the plugins; the restart's start at its first line.
		start := -1
		for i, l := range lines {
			if bytes.Contains(l, []byte(`"type":"plugin-state","generation":2,"plugin":"memory","state":"starting"`)) {
				start = i
			}
		}
		if start < 0 {
			t.Fatalf("no starting state for memory in:\n%s", bytes.Join(lines, []byte("\n")))
		}
		checkGolden(t, "events", normalize(append(bytes.Join(lines[start:], []byte("\n")), '\n'), f.home))
	})
}

// TestStatusCalls: the kernel's counters appear as "calls" of each plugin:
// three calls of a kvstore provider, one of them refused by the plugin.
func TestStatusCalls(t *testing.T) {
	f := start(t, admin.Options{})
	for _, in := range []string{`"a"`, `"b"`, `{"bad": true}`} {
		f.k.CallProvider(context.Background(), "plugin/kvstore/get", json.RawMessage(in))
	}
	code, body := f.request(t, "GET", "/v1/status", "")
	if code != 200 {
		t.Fatalf("HTTP %d: %s", code, body)
	}
	checkGolden(t, "status-calls", normalize(body, f.home))
}

const adminDoc = "../docs/admin.md"

// goldenBlock matches a golden answer embedded in docs/admin.md:
//
//	<!-- golden status -->
//	```json
//	...
//	```
var goldenBlock = regexp.MustCompile("(?s)<!-- golden ([a-z0-9-]+) -->\n```json\n(.*?)```\n")

// TestDocsMatchGoldens holds docs/admin.md and testdata/*.json together:
// every golden answer is shown in the doc, verbatim, and every answer the
// doc shows is a golden one. With -update, the doc's copies are rewritten
// from the goldens; the tests that write the goldens come first in this
// file (and status-calls' too), so one -update run rewrites both.
func TestDocsMatchGoldens(t *testing.T) {
	doc, err := os.ReadFile(adminDoc)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	goldens := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		goldens[strings.TrimSuffix(filepath.Base(f), ".json")] = string(data)
	}
	shown := map[string]bool{}
	out := goldenBlock.ReplaceAllStringFunc(string(doc), func(block string) string {
		m := goldenBlock.FindStringSubmatch(block)
		name, body := m[1], m[2]
		shown[name] = true
		want, ok := goldens[name]
		switch {
		case !ok:
			t.Errorf("%s shows %q, which is no golden answer (testdata/%s.json)", adminDoc, name, name)
		case *update:
			return "<!-- golden " + name + " -->\n```json\n" + want + "```\n"
		case body != want:
			t.Errorf("%s: the %q example differs from testdata/%s.json (run go test ./admin -update):\n--- doc\n%s--- golden\n%s", adminDoc, name, name, body, want)
		}
		return block
	})
	for _, name := range slices.Sorted(maps.Keys(goldens)) {
		if !shown[name] {
			t.Errorf("%s does not show testdata/%s.json (add <!-- golden %s --> and a json block)", adminDoc, name, name)
		}
	}
	if *update && out != string(doc) {
		if err := os.WriteFile(adminDoc, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// stream opens a raw stream.
func (f *fixture) stream(t *testing.T, ctx context.Context, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://admin"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	return resp
}

// readUntil returns the first line of the stream that contains s.
func readUntil(t *testing.T, resp *http.Response, s string) []byte {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return append(append([]byte(nil), sc.Bytes()...), '\n')
		}
	}
	t.Fatalf("stream ended without a line containing %s: %v", s, sc.Err())
	return nil
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// volatile matches the values that change from run to run.
var volatile = regexp.MustCompile(`("(pid|since|started|created|time|age_seconds|uptime_seconds|elapsed_ms|hash|from_hash|to_hash|go|p50_ms|p90_ms|p99_ms)": ?)("[^"]*"|[0-9.e+-]+)`)

// normalize replaces volatile values with "<key>" and the home with <home>.
func normalize(b []byte, home string) []byte {
	b = bytes.ReplaceAll(b, []byte(home), []byte("<home>"))
	return volatile.ReplaceAll(b, []byte(`$1"<$2>"`))
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
