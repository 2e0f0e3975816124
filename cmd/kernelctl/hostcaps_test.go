package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/config"
)

// TestHostHandlers holds which host capabilities of a config kernelctl
// serves, and the warning for each one it does not.
func TestHostHandlers(t *testing.T) {
	tests := []struct {
		name     string
		caps     []string // "key@version"
		handlers []capability.Key
		warnings []string
	}{
		{"none", nil, []capability.Key{}, nil},
		{"host.log", []string{"host.log@1.0.0"}, []capability.Key{"host.log"}, nil},
		{"a later minor", []string{"host.log@1.7.2"}, []capability.Key{"host.log"}, nil},
		{"not implemented", []string{"host.fs@1.3.0", "host.log@1.0.0"}, []capability.Key{"host.log"}, []string{
			`the config declares host capability host.fs 1.3.0, which kernelctl does not implement: plugins' calls to it are answered not available (-32006)`}},
		{"another major", []string{"host.log@2.0.0"}, []capability.Key{}, []string{
			`the config declares host capability host.log 2.0.0, but kernelctl implements host.log 1.x: plugins' calls to it are answered not available (-32006)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg config.Config
			for _, kv := range tt.caps {
				k, v, _ := strings.Cut(kv, "@")
				cfg.Capabilities = append(cfg.Capabilities, capability.Provided{Key: capability.Key(k), Version: semver.MustParse(v)})
			}
			handlers, warnings, problems := hostHandlers(cfg, hclog.NewNullLogger())
			if problems != nil {
				t.Errorf("problems: %q", problems)
			}
			if keys := slices.Sorted(maps.Keys(handlers)); !slices.Equal(keys, tt.handlers) || !slices.Equal(warnings, tt.warnings) {
				t.Errorf("hostHandlers = %v, %q\nwant        %v, %q", keys, warnings, tt.handlers, tt.warnings)
			}
		})
	}
}

// TestHostCapabilityConfig holds that host.fs.read and host.net.fetch are
// served as their capability_config says, and that every problem of those
// settings is reported with its key path, in config order.
func TestHostCapabilityConfig(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "doc.txt"), "the doc")
	v1 := semver.MustParse("1.0.0")
	cfg := config.Config{
		Capabilities: []capability.Provided{{Key: "host.fs.read", Version: v1}, {Key: "host.net.fetch", Version: v1}},
		CapabilityConfig: map[capability.Key]json.RawMessage{
			"host.fs.read":   json.RawMessage(`{"roots": ["` + root + `"], "max_bytes": 100}`),
			"host.net.fetch": json.RawMessage(`{"allow": ["https://api.example.com/v1/"], "timeout": "2s"}`),
		},
	}
	handlers, warnings, problems := hostHandlers(cfg, hclog.NewNullLogger())
	if keys := slices.Sorted(maps.Keys(handlers)); len(keys) != 2 || warnings != nil || problems != nil {
		t.Fatalf("hostHandlers = %v, %q, %q", keys, warnings, problems)
	}
	out, err := handlers["host.fs.read"](context.Background(), &capability.Call{Caller: "p", Capability: "host.fs.read", Method: "read",
		Input: json.RawMessage(`{"path": "` + root + `/doc.txt"}`)})
	if err != nil || string(out) != `{"size":7,"encoding":"utf-8","content":"the doc"}` {
		t.Errorf("read = %s, %v", out, err)
	}
	_, err = handlers["host.net.fetch"](context.Background(), &capability.Call{Caller: "p", Capability: "host.net.fetch", Method: "get",
		Input: json.RawMessage(`{"url": "https://api.example.com/v2/x"}`)})
	if err == nil || !strings.Contains(err.Error(), "denied: https://api.example.com/v2/x: not in the host's allowlist") {
		t.Errorf("get outside the allowlist = %v", err)
	}

	cfg.Capabilities = append(cfg.Capabilities, capability.Provided{Key: "host.log", Version: v1})
	cfg.CapabilityConfig = map[capability.Key]json.RawMessage{
		"host.fs.read":   json.RawMessage(`{"roots": ["rel"], "root": []}`),
		"host.net.fetch": json.RawMessage(`{"max_bytes": -1}`),
		"host.log":       json.RawMessage(`{"level": "info"}`),
	}
	_, _, problems = hostHandlers(cfg, hclog.NewNullLogger())
	want := []string{
		`capability_config.host.fs.read: unknown field "root"`,
		`capability_config.host.net.fetch: allow: at least one URL prefix is required; max_bytes: -1 must be in 1..2097152`,
		`capability_config.host.log: host.log takes no settings`,
	}
	if !slices.Equal(problems, want) {
		t.Errorf("problems = %q\nwant       %q", problems, want)
	}
	delete(cfg.CapabilityConfig, "host.fs.read")
	if _, _, problems = hostHandlers(cfg, hclog.NewNullLogger()); len(problems) == 0 || problems[0] != "capability_config.host.fs.read: roots: at least one directory is required" {
		t.Errorf("no settings: %q", problems)
	}
}

// TestHostLog holds what host.log's write logs (under the caller's name,
// fields in key order, every string redacted) and how it answers bad
// input.
func TestHostLog(t *testing.T) {
	env := map[string]map[string]config.EnvVar{"redactor": {"TOKEN": {Value: "hunter2", Secret: true}, "MODE": {Value: "strict"}}}
	tests := []struct {
		name, method, input string
		want                string // the line logged, or the error answered
	}{
		{"info", "write", `{"level": "info", "message": "redacted a secret", "fields": {"point": "tool.before"}}`,
			`{"@level":"info","@message":"redacted a secret","@module":"kernelctl.redactor","point":"tool.before"}`},
		{"default level", "write", `{"message": "hello"}`,
			`{"@level":"info","@message":"hello","@module":"kernelctl.redactor"}`},
		{"upper-case level", "write", `{"level": "WARN", "message": "careful"}`,
			`{"@level":"warn","@message":"careful","@module":"kernelctl.redactor"}`},
		{"every kind of field", "write", `{"level": "error", "message": "m", "fields": {"b": true, "n": 42, "z": null, "o": {"k": [1, 2]}, "s": "x"}}`,
			`{"@level":"error","@message":"m","@module":"kernelctl.redactor","b":true,"n":42,"o":"{\"k\":[1,2]}","s":"x","z":null}`},
		{"secrets redacted", "write", `{"message": "token hunter2", "fields": {"hunter2": "is hunter2", "o": {"t": "hunter2"}}}`,
			`{"@level":"info","@message":"token [REDACTED]","@module":"kernelctl.redactor","[REDACTED]":"is [REDACTED]","o":"{\"t\":\"[REDACTED]\"}"}`},
		{"below the logger's level", "write", `{"level": "trace", "message": "hidden"}`, ``},
		{"another method", "read", `{}`, `host.log has no method "read" (it has: write) (code -32601)`},
		{"no input", "write", ``, `host.log.write: input must be {"level": string, "message": string, "fields"?: object} (code -32602)`},
		{"not an object", "write", `"hello"`, `host.log.write: input must be {"level": string, "message": string, "fields"?: object} (code -32602)`},
		{"no message", "write", `{"level": "info"}`, `host.log.write: message is required (code -32602)`},
		{"unknown level", "write", `{"level": "hunter2", "message": "m"}`,
			`host.log.write: level "[REDACTED]": want trace, debug, info, warn or error (code -32602)`},
		{"level off", "write", `{"level": "off", "message": "m"}`,
			`host.log.write: level "off": want trace, debug, info, warn or error (code -32602)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := hclog.New(&hclog.LoggerOptions{Name: loggerName, Output: &buf, JSONFormat: true, DisableTime: true, Level: hclog.Debug})
			cfg := config.Config{PluginEnv: env,
				Capabilities: []capability.Provided{{Key: "host.log", Version: semver.MustParse("1.0.0")}}}
			handlers, _, _ := hostHandlers(cfg, log)
			var input json.RawMessage
			if tt.input != "" {
				input = json.RawMessage(tt.input)
			}
			out, err := handlers["host.log"](context.Background(), &capability.Call{Caller: "redactor", Capability: "host.log",
				Method: tt.method, Input: input, Generation: 1})
			got := strings.TrimSpace(buf.String())
			if err != nil {
				got = err.Error()
			} else if out != nil {
				t.Errorf("output = %s, want none", out)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestRunWarnsOfHostCapabilities: `run --once` on a config declaring a
// host capability kernelctl does not implement prints a warning and runs.
func TestRunWarnsOfHostCapabilities(t *testing.T) {
	buildDemo(t)
	_, cfg := demoCopy(t)
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	c["capabilities"] = append(c["capabilities"].([]any), map[string]any{"capability": "host.fs", "version": "1.3.0"})
	data, err = json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"run", "--once"}, {"run", "--once", "--json"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append(args, "--config", filepath.Clean(cfg)), &stdout, &stderr); code != exitOK {
				t.Fatalf("exit code = %d, want 0; stderr:\n%s", code, stderr.String())
			}
			progress := stdout.String()
			if len(args) == 3 {
				progress = stderr.String() // --json: progress on stderr, the document alone on stdout
				if !json.Valid(stdout.Bytes()) {
					t.Errorf("stdout is not one JSON document:\n%s", stdout.String())
				}
			}
			wantLines(t, "progress", progress, "warning: the config declares host capability host.fs 1.3.0, which kernelctl does not implement: "+
				"plugins' calls to it are answered not available (-32006)\n")
			noChildren(t)
		})
	}
}

// TestRunRefusesBadCapabilityConfig: `run --once` with a host capability
// whose settings are wrong starts nothing and says what is wrong, with the
// config file and the key path.
func TestRunRefusesBadCapabilityConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "kernel.json")
	writeFile(t, cfg, `{"format": 1, "home": "home", "capabilities": [{"capability": "host.fs.read", "version": "1.0.0"}],
		"capability_config": {"host.fs.read": {"roots": ["docs"]}}}`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"run", "--once", "--config", cfg}, &stdout, &stderr); code != exitFailed {
		t.Errorf("exit code = %d, want %d", code, exitFailed)
	}
	want := "kernelctl: " + cfg + `: capability_config.host.fs.read: roots[0]: "docs": must be an absolute path` + "\n"
	if stderr.String() != want {
		t.Errorf("stderr = %q\nwant     %q", stderr.String(), want)
	}
}
