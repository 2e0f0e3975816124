package kernel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

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

// TestSecretsNeverLogged gives plugins a secret that they print to stderr,
// put in error answers and print as they crash: every log line and every
// error message must show [REDACTED] instead.
func TestSecretsNeverLogged(t *testing.T) {
	const secret = "s3cr3t-t0ken-value"
	env := map[string]string{"SCRIPT_LEAK": "API_TOKEN"}
	leaky := func(name, behaviour string) plug {
		e := map[string]string{"SCRIPT_INTERCEPT": "tool.before=" + behaviour}
		for k, v := range env {
			e[k] = v
		}
		return plug{name: name, intercepts: []string{"tool.before"}, env: e}
	}
	cfg := testConfig(writeHome(t, leaky("failing", "fail"), leaky("crashing", "crash")))
	var logs syncBuffer
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace, JSONFormat: true})
	cfg.PluginEnv = map[string]map[string]config.EnvVar{
		"failing":  {"API_TOKEN": {Value: secret, Secret: true}},
		"crashing": {"API_TOKEN": {Value: secret, Secret: true}, "MODE": {Value: "visible"}},
	}
	cfg.Supervision.BackoffMin = 0
	k := startKernel(t, cfg)
	crashed := make(chan error, 1)
	unsub := k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventPluginCrashed {
			crashed <- e.Err
		}
	})
	defer unsub()

	res, err := k.Intercept(context.Background(), "tool.before", json.RawMessage(`[]`))
	var messages []string
	if err != nil {
		messages = append(messages, err.Error())
	}
	if res != nil {
		for _, s := range res.Steps {
			if s.Err != nil {
				messages = append(messages, s.Err.Error())
			}
		}
	}
	ce := <-crashed
	var crash *sidecar.CrashError
	if !errors.As(ce, &crash) {
		t.Fatalf("crash event error %v", ce)
	}
	messages = append(messages, ce.Error())
	for _, st := range k.Plugins() {
		messages = append(messages, st.Reason)
		messages = append(messages, st.Stderr...)
	}
	k.Close(context.Background())
	lines := strings.Split(logs.String(), "\n")
	all := append(lines, messages...)
	redacted := 0
	for _, l := range all {
		if strings.Contains(l, secret) {
			t.Errorf("secret leaked: %s", l)
		}
		if strings.Contains(l, redactedText) {
			redacted++
		}
	}
	if redacted < 3 {
		t.Errorf("[REDACTED] appears %d times; the leaks were not exercised:\n%s\n%s", redacted, logs.String(), strings.Join(messages, "\n"))
	}
	if !strings.Contains(logs.String(), "starting with API_TOKEN=[REDACTED]") {
		t.Errorf("the plugin's stderr line is not logged redacted:\n%s", logs.String())
	}
}

func TestPluginEnvConfig(t *testing.T) {
	cfg, err := config.Parse("k.json", []byte(`{"format": 1,
		"plugin_env": {"redactor": {"API_TOKEN": {"value": "x", "secret": true}, "MODE": "strict"}},
		"limits": {"memory": {"open_files": 256, "address_space": 1073741824}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if v := cfg.PluginEnv["redactor"]; v["API_TOKEN"] != (config.EnvVar{Value: "x", Secret: true}) || v["MODE"] != (config.EnvVar{Value: "strict"}) {
		t.Errorf("PluginEnv = %+v", cfg.PluginEnv)
	}
	if l := cfg.Limits["memory"]; l.OpenFiles != 256 || l.AddressSpace != 1<<30 {
		t.Errorf("Limits = %+v", cfg.Limits)
	}
	_, err = config.Parse("k.json", []byte(`{"format": 1,
		"plugin_env": {"Bad Name": {}, "ok": {"EXTKERNEL_X": "1", "V": 3, "W": {"value": "x", "secrte": true}}},
		"limits": {"m": {"open_files": -1, "cpu": 1}}}`))
	// Unknown keys first, then values of the wrong type, then the checks.
	want := "k.json: limits.m.cpu: unknown key\n" +
		"k.json: plugin_env.ok.W.secrte: unknown key\n" +
		"k.json: plugin_env.ok.V: must be a string or {\"value\": \"...\", \"secret\": true}, got number (line 2, column 66)\n" +
		"k.json: plugin_env.Bad Name: \"Bad Name\" is not a valid package name (use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit)\n" +
		"k.json: plugin_env.ok.EXTKERNEL_X: \"EXTKERNEL_X\" is not a usable environment variable name (letters, digits, '_'; not EXTKERNEL_*)\n" +
		"k.json: limits.m.open_files: must be a positive integer, got -1"
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
}

func TestLimitsAndEnvReachThePlugin(t *testing.T) {
	cfg := testConfig(writeHome(t, plug{name: "limited", env: map[string]string{"SCRIPT_PROVIDERS": "echo"}}))
	cfg.Limits = map[string]pluginpkg.ResourceLimits{"limited": {OpenFiles: 64}}
	k := startKernel(t, cfg)
	pid := clientNamed(k, "limited").PID()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		t.Skipf("no /proc limits: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			if f := strings.Fields(line); len(f) < 5 || f[3] != "64" || f[4] != "64" {
				t.Errorf("open files limit: %q, want 64 64", line)
			}
			return
		}
	}
	t.Error("no open files line in /proc/<pid>/limits")
}

// TestSecretChangeIsPlanned: the fingerprint holds a digest of each secret
// value, never the value, so a plan from a generation's snapshot sees a
// changed secret as "config changed" and an unchanged one as no change.
func TestSecretChangeIsPlanned(t *testing.T) {
	const secret = "s3cr3t-token-9917"
	cfg := testConfig(writeHome(t, plug{name: "redactor"}, plug{name: "other"}))
	env := func(v string) map[string]map[string]config.EnvVar {
		return map[string]map[string]config.EnvVar{"redactor": {"API_TOKEN": {Value: v, Secret: true}, "MODE": {Value: "strict"}}}
	}
	cfg.PluginEnv = env(secret)
	k := startKernel(t, cfg)
	snap := k.Current().Snapshot()
	data, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), secret) {
		t.Fatalf("the snapshot holds the secret: %s", data)
	}
	tests := []struct {
		name, value string
		want        []string // reloaded packages
	}{
		{"same secret", secret, nil},
		{"changed secret", secret + "-rotated", []string{"redactor"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := cfg
			next.PluginEnv = env(tt.value)
			plan, err := PlanFrom(next, snap)
			if err != nil {
				t.Fatal(err)
			}
			if got := namesOf(plan, generation.ClassReloaded); !slices.Equal(got, tt.want) {
				t.Errorf("reloaded = %v, want %v (%+v)", got, tt.want, plan.Packages)
			}
			for _, c := range plan.Packages {
				if c.Name == "redactor" && tt.want != nil && !slices.Equal(c.Reasons, []string{"config changed"}) {
					t.Errorf("redactor reasons = %q, want config changed", c.Reasons)
				}
			}
		})
	}
}
