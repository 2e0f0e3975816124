package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// buildFaulty compiles the faulty test plugin into a temporary directory.
func buildFaulty(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "faulty")
	if out, err := exec.Command("go", "build", "-o", bin, "../../testdata/plugins/faulty").CombinedOutput(); err != nil {
		t.Fatalf("building the faulty plugin: %v\n%s", err, out)
	}
	return bin
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// leakHome writes a home whose packages each run the faulty plugin in
// leak-secret mode, leaking the secret (a secret plugin_env value) through
// its handshake as the package's LEAK_HANDSHAKE says, and a config for it.
func leakHome(t *testing.T, secret string) (home, config string) {
	t.Helper()
	bin := buildFaulty(t)
	home = t.TempDir()
	env := map[string]any{}
	for name, how := range map[string]string{"leaky": "text", "leak-version": "version", "leak-name": "name",
		"leak-protocol": "protocol", "leak-ids": "ids", "leak-early": "early"} {
		dir := filepath.Join(home, "packages", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(bin, filepath.Join(dir, "faulty")); err != nil {
			t.Fatal(err)
		}
		m, _ := json.Marshal(map[string]any{"format": 1, "name": name, "version": "0.1.0", "kernel": "^1.0",
			"runtime": map[string]any{"command": "./faulty", "args": []string{"leak-secret"}, "intercepts": []string{"tool.before"},
				"env": map[string]string{"LEAK_HANDSHAKE": how}}})
		writeFile(t, filepath.Join(dir, "plugin.json"), string(m))
		env[name] = map[string]any{"LEAK_SECRET": map[string]any{"value": secret, "secret": true}}
	}
	cfg, _ := json.Marshal(map[string]any{"format": 1, "home": ".", "points": []string{"tool.before"},
		"supervision": map[string]string{"backoff_min": "1h", "heartbeat_interval": "1h"}, "plugin_env": env})
	config = filepath.Join(home, "kernel.json")
	writeFile(t, config, string(cfg))
	return home, config
}

// TestSecretInNoOutput plants a configured secret in every channel of text
// a plugin controls (its handshake's name, version, protocol version,
// provider refs, action IDs and free text; a notification before the
// handshake; an invalid decision; an error answer's message and data; log
// notification keys and values; notify data; stderr lines, one over 16 KiB
// with the secret across the cut), then runs `kernelctl run --once
// --json`, a kernel that dispatches calls to the plugins, and `kernelctl
// doctor`, and greps every output, log line, event, error and file for
// the secret or either half of it: none may hold it.
func TestSecretInNoOutput(t *testing.T) {
	const secret = "hunter2-SECRET-e2e-4711"
	home, config := leakHome(t, secret)
	var texts []string // everything the host printed, logged, returned or stored
	add := func(what, s string) { texts = append(texts, what+": "+s) }

	var stdout, stderr syncBuffer // the log and the progress share stderr
	code := run([]string{"run", "--config", config, "--once", "--json"}, &stdout, &stderr)
	add("run stdout", stdout.String())
	add("run stderr", stderr.String())
	if code != exitOK {
		t.Fatalf("run --once --json: exit %d\n%s", code, stderr.String())
	}

	dispatchLeaks(t, config, add)

	for _, args := range [][]string{{"doctor", "--config", config}, {"doctor", "--config", config, "--json"}} {
		var stdout, stderr syncBuffer
		run(args, &stdout, &stderr)
		add(strings.Join(args, " "), stdout.String()+stderr.String())
	}
	files := 0
	err := filepath.WalkDir(filepath.Join(home, "state"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		add(path, string(data))
		files++
		return err
	})
	if err != nil || files < 2 {
		t.Fatalf("state files: %d, %v; want current.json and a snapshot", files, err)
	}
	noChildren(t)

	all := strings.Join(texts, "\n")
	for _, leak := range []string{secret, secret[:len(secret)/2], secret[len(secret)/2:]} {
		for _, s := range texts {
			if i := strings.Index(s, leak); i >= 0 {
				what, _, _ := strings.Cut(s, ": ")
				t.Errorf("%q leaked in %s: ...%s...", leak, what, s[max(0, i-80):min(len(s), i+len(leak)+40)])
			}
		}
	}
	// Each channel was exercised: its redacted form is there.
	for _, want := range []string{
		`Title [REDACTED]`, `uses [REDACTED]`, // run --json: action title, provider description
		`calls itself \"name-[REDACTED]\"`, `1.0.0-[REDACTED]`, `ref \"ref-[REDACTED]\" holds secret text`, // warnings, snapshot
		`notification \"x/[REDACTED]\" sent before`,
		`invalid decision \"allow [REDACTED]\"`,                          // the kernel's warning
		`rejected [REDACTED]`, `{"[REDACTED]":[1],"token":"[REDACTED]"}`, // error answer and data
		`"[REDACTED]":"as a key"`, `"@message":"using [REDACTED]"`, // log notification
		`x[REDACTED]y`, // the stderr line over 16 KiB, cut after redaction
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no output holds %s: that channel was not exercised", want)
		}
	}
}

// dispatchLeaks runs a kernel on config, with every log line, event and
// error recorded through add, and makes the running leaky plugin leak
// through an interceptor call and provider calls.
func dispatchLeaks(t *testing.T, configPath string, add func(what, s string)) {
	t.Helper()
	cfg, err := config.Load(configPath)
	if err != nil {
		t.Fatal(err)
	}
	logs := new(syncBuffer)
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: logs, Level: hclog.Trace, JSONFormat: true})
	k, err := kernel.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k.Subscribe(func(e observe.Event) { add("event", fmt.Sprintf("%+v %v", e, e.Err)) })
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := k.Intercept(ctx, "tool.before", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range res.Steps {
		add("step", fmt.Sprintf("%+v", s))
	}
	for _, ref := range []string{"error", "quiet"} {
		_, err := k.CallProvider(ctx, "plugin/leaky/"+ref, nil)
		if err != nil {
			add("call error", err.Error())
			var pe *protocol.Error
			if errors.As(err, &pe) {
				add("error data", string(pe.Data))
			}
		}
	}
	for _, c := range k.Current().Registry().All() { // the handshake's declarations, as a host sees them
		add("contribution", fmt.Sprintf("%+v", c))
	}
	for _, p := range k.Plugins() {
		add("plugin state", fmt.Sprintf("%+v", p))
	}
	snap, _ := json.Marshal(k.Current().Snapshot())
	add("snapshot", string(snap))
	closeCtx, cancelClose := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelClose()
	if err := k.Close(closeCtx); err != nil {
		add("close", err.Error())
	}
	add("kernel log", logs.String())
}
