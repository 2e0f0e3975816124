package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// callerPlug is a package running testdata/plugins/caller: it provides
// the capabilities provides ("key@version"), each with the method "run"
// mapped to its provider "run" (and "get" too), and requires requires
// ("key constraint", a trailing "?" for optional).
func callerPlug(name string, provides []string, requires ...string) plug {
	p := plug{name: name, bin: callerBin, provides: provides, requires: requires,
		env: map[string]string{"CALLER_PROVIDES": strings.Join(provides, ",")}, methods: map[string]map[string]string{}}
	for _, kv := range provides {
		key, _, _ := strings.Cut(kv, "@")
		p.methods[key] = map[string]string{"run": "run", "get": "run"}
	}
	return p
}

// callScript is the caller plugin's script that calls method of key with
// input (a script for a caller provider, or any JSON), naming the request
// it serves as its parent when parent is set.
func callScript(key, method, input string, parent bool) string {
	p := ""
	if parent {
		p = `,"parent":true`
	}
	if input == "" {
		input = "null"
	}
	return fmt.Sprintf(`{"call":{"capability":%q,"method":%q,"input":%s%s}}`, key, method, input, p)
}

// callOutcome is what the caller plugin reports of its call.
type callOutcome struct {
	Output json.RawMessage `json:"output"`
	Error  *protocol.Error `json:"error"`
}

func (o callOutcome) String() string {
	if o.Error != nil {
		return o.Error.Error()
	}
	return string(o.Output)
}

// runCaller runs script on plugin's provider "run" and decodes the outcome
// of the call it makes.
func runCaller(t *testing.T, ctx context.Context, k *Kernel, plugin, script string) callOutcome {
	t.Helper()
	out, err := k.CallProvider(ctx, "plugin/"+plugin+"/run", json.RawMessage(script))
	if err != nil {
		t.Fatalf("CallProvider(%s, %s): %v", plugin, script, err)
	}
	var o callOutcome
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("outcome %s: %v", out, err)
	}
	return o
}

// hostLog is the handler of host.log the tests register: "write" answers
// what it was called with, "refuse" a protocol error, "boom" a plain one,
// "panic" panics.
func hostLog(_ context.Context, call *capability.Call) (json.RawMessage, error) {
	switch call.Method {
	case "refuse":
		return nil, &protocol.Error{Code: protocol.CodeMethodNotFound, Message: fmt.Sprintf("host.log has no method %q", call.Method)}
	case "boom":
		return nil, errors.New("boom")
	case "panic":
		panic("host handler bug")
	}
	return json.Marshal(map[string]any{"caller": call.Caller, "capability": call.Capability, "method": call.Method,
		"input": call.Input, "generation": call.Generation})
}

// callConfig is testConfig with host.log served by hostLog, and host.bare
// provided without a handler.
func callConfig(home string) config.Config {
	cfg := testConfig(home)
	cfg.Capabilities = append(cfg.Capabilities, capability.Provided{Key: "host.bare", Version: semver.MustParse("1.0.0")})
	cfg.Handlers = map[capability.Key]capability.Handler{"host.log": hostLog}
	return cfg
}

// TestPluginCalls holds what a plugin's capability/call is answered, for
// each route the kernel decides: a host handler, another plugin's
// provider, and every refusal, each naming the caller, the capability and
// the method.
func TestPluginCalls(t *testing.T) {
	memory := callerPlug("memory", nil, "storage.kv ^1.0", "host.log ^1.0", "host.bare *", "telemetry ^1.0?")
	kvstore := callerPlug("kvstore", []string{"storage.kv@1.2.0"})
	old := callerPlug("old", nil, "host.log ^1.0")
	old.env["CALLER_PROTOCOL"] = "1.0.0"
	k := startKernel(t, callConfig(writeHome(t, memory, kvstore, old)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tests := []struct {
		name, caller, script, want string
	}{
		{"host handler", "memory", callScript("host.log", "write", `{"line":"hi"}`, true),
			`{"caller":"memory","capability":"host.log","generation":1,"input":{"line":"hi"},"method":"write"}`},
		{"host handler without parent", "memory", callScript("host.log", "write", `2`, false),
			`{"caller":"memory","capability":"host.log","generation":1,"input":2,"method":"write"}`},
		{"host handler's protocol error", "memory", callScript("host.log", "refuse", ``, true),
			`host.log has no method "refuse" (code -32601)`},
		{"host handler fails", "memory", callScript("host.log", "boom", ``, true),
			`host handler of "host.log.boom" failed: boom (code -32603)`},
		{"host handler panics", "memory", callScript("host.log", "panic", ``, true),
			`host handler of "host.log.panic" panicked (code -32603)`},
		{"plugin provider", "memory", callScript("storage.kv", "get", `{"echo":"make -j8"}`, true), `{"echo":"make -j8"}`},
		{"plugin provider's error", "memory", callScript("storage.kv", "get", `{"fail":"no such key"}`, true),
			`no such key (code -32000)`},
		{"not required", "memory", callScript("billing", "charge", ``, true),
			`plugin "memory" may not call "billing.charge": its manifest does not require capability "billing" (code -32005)`},
		{"optional requirement unsatisfied", "memory", callScript("telemetry", "send", ``, false),
			`capability "telemetry" is not available to plugin "memory" (call of "telemetry.send"): optional requirement not satisfied (code -32006)`},
		{"host capability without handler", "memory", callScript("host.bare", "read", ``, true),
			`capability "host.bare" is not available to plugin "memory" (call of "host.bare.read"): the host provides it but registered no handler for it (code -32006)`},
		{"method not implemented", "memory", callScript("storage.kv", "put", ``, true),
			`plugin "memory" may not call "storage.kv.put": its provider "kvstore" implements no method "put" of capability "storage.kv" (provides[].methods) (code -32601)`},
		{"method that is no identifier", "memory", callScript("storage.kv", "Get", ``, true),
			`plugin "memory" may not call "storage.kv.Get": "Get" is not a valid method name: segment 1 ("Get") contains an upper-case letter (identifiers are lower-case) (code -32602)`},
		{"a 1.0 plugin is served, and sent 1.4.0", "old", `{"init":true}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "" { // the init script answers no call outcome
				out, err := k.CallProvider(ctx, "plugin/"+tt.caller+"/run", json.RawMessage(tt.script))
				if err != nil || string(out) != `"`+protocol.Version+`"` || protocol.Version != "1.4.0" {
					t.Errorf("init = %s, %v; want %q (protocol.Version %s)", out, err, "1.4.0", protocol.Version)
				}
				return
			}
			if o := runCaller(t, ctx, k, tt.caller, tt.script); o.String() != tt.want {
				t.Errorf("outcome = %s\nwant      %s", o, tt.want)
			}
		})
	}
}

// pingPong are two caller packages that call each other: a provides cap.a
// and requires cap.b, b the other way round (a cycle: a warning).
func pingPong() []plug {
	return []plug{
		callerPlug("a", []string{"cap.a@1.0.0"}, "cap.b ^1.0"),
		callerPlug("b", []string{"cap.b@1.0.0"}, "cap.a ^1.0"),
	}
}

// bounce is the script for plugin a that makes calls nested calls between
// a and b, each naming its parent; the innermost callee echoes "deep".
func bounce(calls int) string {
	script := `{"echo":"deep"}`
	for i := calls; i >= 1; i-- {
		key := "cap.b" // made by a when i is odd
		if i%2 == 0 {
			key = "cap.a"
		}
		script = callScript(key, "run", script, true)
	}
	return script
}

// TestReentrantCalls holds that calls nest, A → B → A included (a plugin
// keeps serving while its handler waits for its own call), up to the
// depth bound, and that the call one deeper is refused with the chain.
func TestReentrantCalls(t *testing.T) {
	k := startKernel(t, callConfig(writeHome(t, pingPong()...)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tests := []struct {
		name  string
		calls int
		want  string // the innermost outcome
	}{
		{"a → b → a", 2, `{"echo":"deep"}`},
		{"as deep as allowed", 8, `{"echo":"deep"}`},
		{"one too deep", 9, `plugin "a" may not call "cap.b.run": call depth exceeded (at most 8): depth 9: a → b → a → b → a → b → a → b → a (code -32007)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := runCaller(t, ctx, k, "a", bounce(tt.calls))
			for range tt.calls - 1 { // each call's outcome wraps the next one's
				if o.Error != nil {
					t.Fatalf("outer outcome %s, want an output", o)
				}
				if err := json.Unmarshal(o.Output, &o); err != nil {
					t.Fatalf("nested outcome %s: %v", o.Output, err)
				}
			}
			if o.String() != tt.want {
				t.Errorf("innermost outcome = %s\nwant                 %s", o, tt.want)
			}
		})
	}
}

// notices collects the notify events of k's plugins, for tests waiting on
// them.
func notices(t *testing.T, k *Kernel) <-chan observe.Event {
	ch := make(chan observe.Event, 64)
	stop := k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventNotify {
			select {
			case ch <- e:
			default:
				t.Errorf("notify %s from %s dropped", e.Name, e.Plugin)
			}
		}
	})
	t.Cleanup(stop)
	return ch
}

// awaitNotice waits, up to bound, for the notify event name from plugin.
func awaitNotice(t *testing.T, ch <-chan observe.Event, plugin, name string, bound time.Duration) {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		select {
		case e := <-ch:
			if e.Plugin == plugin && e.Name == name {
				return
			}
		case <-timer.C:
			t.Fatalf("no notify %q from %q within %v", name, plugin, bound)
		}
	}
}

// chainDeadline is the host's deadline in TestCallCancellation: long
// enough for a → b → c to reach c on a loaded machine, a tenth of the call
// timeout c would get on its own.
const chainDeadline = 3 * time.Second

// TestCallCancellation holds that the end of the host's call reaches the
// innermost plugin of a chain a → b → c: c, blocked, is sent $/cancel when
// the host cancels its call, or when its deadline (the host's context's,
// or the provider deadline of the config) passes, long before c's own
// call timeout would.
func TestCallCancellation(t *testing.T) {
	chain := []plug{
		callerPlug("a", nil, "cap.b ^1.0"),
		callerPlug("b", []string{"cap.b@1.0.0"}, "cap.c ^1.0"),
		callerPlug("c", []string{"cap.c@1.0.0"}),
	}
	script := callScript("cap.b", "run", callScript("cap.c", "run", `{"notify":"blocking","block":true}`, true), true)
	tests := []struct {
		name     string
		provider time.Duration // Deadlines.Provider; 0: the default
		call     func(k *Kernel, blocking <-chan struct{}) error
		want     error
	}{
		{"host cancels", 0, func(k *Kernel, blocking <-chan struct{}) error {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // bounds a failed test
			defer cancel()
			go func() {
				<-blocking
				cancel()
			}()
			_, err := k.CallProvider(ctx, "plugin/a/run", json.RawMessage(script))
			return err
		}, context.Canceled},
		{"host's deadline", 0, func(k *Kernel, _ <-chan struct{}) error {
			ctx, cancel := context.WithTimeout(context.Background(), chainDeadline)
			defer cancel()
			_, err := k.CallProvider(ctx, "plugin/a/run", json.RawMessage(script))
			return err
		}, context.DeadlineExceeded},
		{"provider deadline", chainDeadline, func(k *Kernel, _ <-chan struct{}) error {
			_, err := k.CallProvider(context.Background(), "plugin/a/run", json.RawMessage(script))
			return err
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := callConfig(writeHome(t, chain...))
			cfg.Deadlines.Provider = tt.provider
			k := startKernel(t, cfg)
			events := notices(t, k)
			blocking := make(chan struct{})
			errs := make(chan error, 1)
			go func() { errs <- tt.call(k, blocking) }()
			defer func() {
				select {
				case <-blocking:
				default:
					close(blocking) // a test that failed before: let the call end
				}
			}()
			awaitNotice(t, events, "c", "blocking", 10*time.Second)
			close(blocking)
			// Well below c's own call timeout (30s): c is cancelled with
			// the host's call.
			awaitNotice(t, events, "c", "cancelled", chainDeadline+7*time.Second)
			var err error
			select {
			case err = <-errs:
			case <-time.After(30 * time.Second):
				t.Fatal("the host's call did not return")
			}
			var pe *PluginError
			if !errors.As(err, &pe) || !errors.Is(err, tt.want) {
				t.Errorf("CallProvider = %v, want a *PluginError wrapping %v", err, tt.want)
			}
		})
	}
}

// TestCalleeCrash: a callee that crashes in the middle of a call fails the
// caller's call at once with -32006 and the crash, not at the deadline.
func TestCalleeCrash(t *testing.T) {
	cfg := callConfig(writeHome(t, callerPlug("memory", nil, "storage.kv ^1.0"), callerPlug("kvstore", []string{"storage.kv@1.0.0"})))
	k := startKernel(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // the deadline is 30s
	defer cancel()
	o := runCaller(t, ctx, k, "memory", callScript("storage.kv", "get", `{"crash":true}`, true))
	const want = `capability "storage.kv" is not available to plugin "memory" (call of "storage.kv.get"): provider "kvstore" crashed: plugin "kvstore" `
	if o.Error == nil || o.Error.Code != protocol.CodeNotAvailable || !strings.HasPrefix(o.Error.Message, want) ||
		!strings.Contains(o.Error.Message, "crashing as told") {
		t.Errorf("outcome = %s\nwant -32006 starting %s and quoting the crash", o, want)
	}
}

// TestStaleAndAdoptedCallers holds which generation serves a call across
// a reload: a plugin adopted by the new generation calls into it; a
// replaced process still finishing in the retired one is refused as stale
// (-32008) when its call names no request of its own generation.
func TestStaleAndAdoptedCallers(t *testing.T) {
	kept := callerPlug("kept", nil, "host.log ^1.0")
	replaced := callerPlug("replaced", nil, "host.log ^1.0")
	home := writeHome(t, kept, replaced)
	k := startKernel(t, callConfig(home))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Hold generation 1 open, as a call in flight would, and keep its
	// process of "replaced" at hand.
	l1, err := k.acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer l1.release()
	oldReplaced := l1.client("replaced")
	replaced.version = "1.0.1"
	rewrite(t, home, replaced)
	if _, err := k.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if g := k.Current(); g.Number() != 2 || !g.Member("kept").Adopted || g.Member("replaced").Adopted {
		t.Fatalf("generation %d: kept adopted %v, replaced adopted %v; want 2, true, false", g.Number(),
			g.Member("kept").Adopted, g.Member("replaced").Adopted)
	}
	tests := []struct {
		name, script string
	}{
		{"without parent", callScript("host.log", "write", `1`, false)},
		{"with parent", callScript("host.log", "write", `1`, true)},
	}
	for _, tt := range tests {
		t.Run("adopted "+tt.name, func(t *testing.T) {
			want := `{"caller":"kept","capability":"host.log","generation":2,"input":1,"method":"write"}`
			if o := runCaller(t, ctx, k, "kept", tt.script); o.String() != want {
				t.Errorf("outcome = %s, want %s", o, want)
			}
		})
		t.Run("stale "+tt.name, func(t *testing.T) {
			// A request the test sends to the old process directly: it
			// names no generation, as a call from a retired one would not
			// name the current one.
			out, err := oldReplaced.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "run", Input: json.RawMessage(tt.script)})
			var o callOutcome
			if err == nil {
				err = json.Unmarshal(out, &o)
			}
			const want = `plugin "replaced" is not a member of the current generation 2: this process belongs to another one (code -32008)`
			if err != nil || o.String() != want {
				t.Errorf("outcome = %s, %v; want %s", o, err, want)
			}
		})
	}
}

// TestConfigHandlers: New refuses a handler for a capability the host
// does not provide, a nil handler and a negative call depth.
func TestConfigHandlers(t *testing.T) {
	tests := []struct {
		name string
		edit func(*config.Config)
		want string
	}{
		{"undeclared capability", func(c *config.Config) { c.Handlers = map[capability.Key]capability.Handler{"host.fs": hostLog} },
			`kernel: config: handlers.host.fs: the host does not provide "host.fs" (add it to capabilities)`},
		{"nil handler", func(c *config.Config) { c.Handlers = map[capability.Key]capability.Handler{"host.log": nil} },
			`kernel: config: handlers.host.log: the handler is nil`},
		{"negative depth", func(c *config.Config) { c.MaxCallDepth = -1 }, `kernel: config: max_call_depth: must be at least 1, got -1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t.TempDir())
			tt.edit(&cfg)
			if _, err := New(cfg); err == nil || err.Error() != tt.want {
				t.Errorf("New = %v, want %s", err, tt.want)
			}
		})
	}
}
