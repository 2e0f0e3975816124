package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/observe"
)

// gateWant is what a plugin of TestFeatureGating gets of each feature.
type gateWant struct {
	call     string // the outcome of its capability/call, as callOutcome prints it ("output" for one)
	progress uint64 // the progress counted of the 3 it sends
	streamed bool   // whether the host asked it for a stream
	features []string
	usage    map[string]uint64
}

var allFeatures = []string{"calls", "cancel", "contributions", "progress", "streams", "trace"}

// TestFeatureGating holds what the host serves a plugin by the features
// it announced (protocol 1.4, docs/protocol.md §4.6), with a raw plugin
// (testdata/plugins/caller): one that answers 1.3.0 and sends no flags is
// served every feature of 1.3, as before (TestOldPluginKeepsFeatures
// holds the same for each 1.x before 1.4); one of 1.4 announcing every
// flag too; one of 1.4 announcing none gets -32601 for its call, its
// progress ignored (extending nothing, counted as no use) and no stream
// asked of it; one announcing calls only is served its call alone. The
// usage counters count exactly what was served.
func TestFeatureGating(t *testing.T) {
	tests := []struct {
		name, protocol, features string
		want                     gateWant
	}{
		{"1.3 plugin, no flags", "1.3.0", "none", gateWant{call: "output", progress: 3, streamed: true, features: allFeatures,
			usage: map[string]uint64{"calls": 1, "progress": 3, "streams": 1, "protocol/1.3": 1}}},
		{"1.4 plugin, every flag", "1.4.0", "", gateWant{call: "output", progress: 3, streamed: true, features: allFeatures,
			usage: map[string]uint64{"calls": 1, "progress": 3, "streams": 1, "protocol/1.4": 1}}},
		{"1.4 plugin, no flag", "1.4.0", "none", gateWant{call: `-32601: capability/call: plugin "p" did not announce the "calls" feature in initialize`,
			features: []string{}, usage: map[string]uint64{"protocol/1.4": 1}}},
		{"1.4 plugin, calls only", "1.4.0", "calls,telepathy", gateWant{call: "output", features: []string{"calls"},
			usage: map[string]uint64{"calls": 1, "protocol/1.4": 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := callerPlug("p", nil, "host.log ^1.0")
			p.env["CALLER_PROTOCOL"], p.env["CALLER_FEATURES"] = tt.protocol, tt.features
			k := startKernel(t, callConfig(writeHome(t, p)))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			out, err := k.CallProvider(ctx, "plugin/p/run", json.RawMessage(callScript("host.log", "write", `"hi"`, true)))
			if err != nil {
				t.Fatal(err)
			}
			var o callOutcome
			if err := json.Unmarshal(out, &o); err != nil {
				t.Fatal(err)
			}
			if got := outcomeText(o); got != tt.want.call {
				t.Errorf("call: %s, want %s", got, tt.want.call)
			}
			if out, err := k.CallProvider(ctx, "plugin/p/run", json.RawMessage(`{"progress":3}`)); err != nil || string(out) != `{"progressed":3}` {
				t.Errorf("progress: %s, %v", out, err)
			}
			var chunks []string
			for c, err := range k.StreamProvider(ctx, "plugin/p/run", json.RawMessage(`{"chunks":2}`)) {
				if err != nil {
					t.Fatal(err)
				}
				chunks = append(chunks, string(c))
			}
			wantChunks := []string{`{"streamed":false}`}
			if tt.want.streamed {
				wantChunks = []string{"1", "2"}
			}
			if !slices.Equal(chunks, wantChunks) {
				t.Errorf("stream: %q, want %q", chunks, wantChunks)
			}
			st := pluginState(t, k, "p")
			if st.Protocol != tt.protocol || !reflect.DeepEqual(st.Features, tt.want.features) {
				t.Errorf("status: protocol %q, features %q; want %q, %q", st.Protocol, st.Features, tt.protocol, tt.want.features)
			}
			if !maps.Equal(st.Usage, tt.want.usage) {
				t.Errorf("usage %v, want %v", st.Usage, tt.want.usage)
			}
			if st.Usage["progress"] != tt.want.progress {
				t.Errorf("progress counted %d, want %d", st.Usage["progress"], tt.want.progress)
			}
		})
	}
}

// outcomeText is a caller's call outcome: "output", or its error as
// "code: message".
func outcomeText(o callOutcome) string {
	if o.Error != nil {
		return fmt.Sprintf("%d: %s", o.Error.Code, o.Error.Message)
	}
	return "output"
}

// TestOldPluginKeepsFeatures holds that a plugin answering any version
// before 1.4 (it sends no flags) keeps every feature of 1.3, whatever
// version it answered: a 1.0 plugin may call and report progress, as it
// could with a 1.3 host, and is asked for streams (a producer before 1.2
// with the window of one chunk its byte window allows it, §5.12, as
// before). Its status shows the features the host takes it to use.
func TestOldPluginKeepsFeatures(t *testing.T) {
	for _, tt := range []struct {
		v      string
		chunks int
	}{{"1.0.0", 1}, {"1.1.0", 1}, {"1.2.0", 3}, {"1.3.0", 3}} {
		v := tt.v
		t.Run(v, func(t *testing.T) {
			p := callerPlug("old", nil, "host.log ^1.0")
			p.env["CALLER_PROTOCOL"] = v
			k := startKernel(t, callConfig(writeHome(t, p)))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := k.CallProvider(ctx, "plugin/old/run", json.RawMessage(callScript("host.log", "write", `"hi"`, true))); err != nil {
				t.Fatal(err)
			}
			if _, err := k.CallProvider(ctx, "plugin/old/run", json.RawMessage(`{"progress":2}`)); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, err := range k.StreamProvider(ctx, "plugin/old/run", json.RawMessage(`{"chunks":3}`)) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			st := pluginState(t, k, "old")
			want := map[string]uint64{"calls": 1, "progress": 2, "streams": 1, "protocol/" + v[:3]: 1}
			if n != tt.chunks || !maps.Equal(st.Usage, want) || !reflect.DeepEqual(st.Features, allFeatures) {
				t.Errorf("%d chunks, usage %v, features %q; want %d, %v, %q", n, st.Usage, st.Features, tt.chunks, want, allFeatures)
			}
		})
	}
}

// TestFeatureFlagsAcrossLanguages holds the flags with a plugin of each
// SDK (Go, Python, Node.js; the interpreters must be there under
// EXTKERNEL_REQUIRE_INTERPRETERS=1): each reads the host's six flags
// (and no unknown one), announces its own, and its uses are counted.
func TestFeatureFlagsAcrossLanguages(t *testing.T) {
	k := startKernel(t, callConfig(writePolyglotHome(t,
		polyglot(goLang, "go-a", []string{"poly.go-a@1.0.0"}, "host.log ^1.0"),
		polyglot(pythonLang, "py", []string{"poly.py@1.0.0"}, "host.log ^1.0"),
		polyglot(nodeLang, "js", []string{"poly.js@1.0.0"}, "host.log ^1.0"),
	)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	langs := map[string]string{"go-a": "go", "py": "python", "js": "node"}
	for _, plugin := range []string{"go-a", "py", "js"} {
		t.Run(plugin, func(t *testing.T) {
			out, err := k.CallProvider(ctx, "plugin/"+plugin+"/run", json.RawMessage(`{"features":true}`))
			want := `{"host_features":["calls","cancel","contributions","progress","streams","trace"],"lang":"` + langs[plugin] + `"}`
			if err != nil || compactJSON(t, string(out)) != want {
				t.Errorf("host features %s, %v; want %s", out, err, want)
			}
			if o := runPoly(t, ctx, k, plugin, polyCall("host.log", "write", `{"line":"hi"}`)); o.Error != nil {
				t.Errorf("call: %s", o)
			}
			if out, err := k.CallProvider(ctx, "plugin/"+plugin+"/run", json.RawMessage(`{"progress":2}`)); err != nil {
				t.Errorf("progress: %s, %v", out, err)
			}
			st := pluginState(t, k, plugin)
			wantUsage := map[string]uint64{"calls": 1, "progress": 2, "protocol/1.4": 1}
			if st.Protocol != "1.4.0" || !reflect.DeepEqual(st.Features, allFeatures) || !maps.Equal(st.Usage, wantUsage) {
				t.Errorf("status: protocol %q, features %q, usage %v; want 1.4.0, %q, %v", st.Protocol, st.Features, st.Usage, allFeatures, wantUsage)
			}
		})
	}
}

// usageObserver is an observe.UsageObserver recording the uses it is
// told of.
type usageObserver struct {
	mu   sync.Mutex
	uses []string // "plugin key"
}

func (o *usageObserver) Call(ctx context.Context, _ observe.CallInfo) (context.Context, func(observe.CallOutcome)) {
	return ctx, nil
}

func (o *usageObserver) Dispatch(ctx context.Context, _ observe.DispatchInfo) (context.Context, func(error)) {
	return ctx, nil
}

func (o *usageObserver) Start(observe.StartInfo) {}

func (o *usageObserver) Use(plugin, key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.uses = append(o.uses, plugin+" "+key)
}

// TestUsageObserverAndDeprecation holds that an observer that is an
// observe.UsageObserver is told of every use the counters count, and
// that a deprecated feature (none is deprecated today: the test
// deprecates progress) is warned about once per plugin process, in an
// EventWarning naming the plugin, however often it is used.
func TestUsageObserverAndDeprecation(t *testing.T) {
	deprecations["progress"] = deprecation{since: "v0.9.0", instead: "report progress with notify"}
	t.Cleanup(func() { delete(deprecations, "progress") })
	obs := &usageObserver{}
	cfg := callConfig(writeHome(t, callerPlug("p", nil)))
	cfg.Observer = obs
	var mu sync.Mutex
	var warnings []observe.Event
	k := startKernelSubscribed(t, cfg, func(e observe.Event) {
		if e.Type == observe.EventWarning && strings.Contains(e.Message, "deprecated") {
			mu.Lock()
			warnings = append(warnings, e)
			mu.Unlock()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 2 {
		if _, err := k.CallProvider(ctx, "plugin/p/run", json.RawMessage(`{"progress":2}`)); err != nil {
			t.Fatal(err)
		}
	}
	obs.mu.Lock()
	uses := slices.Clone(obs.uses)
	obs.mu.Unlock()
	want := []string{"p protocol/1.4", "p progress", "p progress", "p progress", "p progress"}
	if !slices.Equal(uses, want) {
		t.Errorf("observer told %q, want %q", uses, want)
	}
	if st := pluginState(t, k, "p"); st.Usage["progress"] != 4 {
		t.Errorf("usage %v, want progress 4", st.Usage)
	}
	// Events are delivered in order, each before the next call's answer
	// is read: the warning of the first use is there once the call ended.
	mu.Lock()
	defer mu.Unlock()
	wantMsg := `plugin "p" uses "progress", deprecated since v0.9.0: report progress with notify`
	if len(warnings) != 1 || warnings[0].Plugin != "p" || warnings[0].Message != wantMsg {
		t.Errorf("warnings %+v, want one: %s", warnings, wantMsg)
	}
}

// TestUsageKeysFixed holds that the counters are keyed by a fixed set:
// every key the sidecars report is one of wire.UsageKeys (each feature
// and each protocol minor), each once.
func TestUsageKeysFixed(t *testing.T) {
	for _, f := range wire.AllFeatures.Names() {
		if _, ok := usageIndex[f]; !ok {
			t.Errorf("feature %q has no usage counter", f)
		}
	}
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.9.0"} {
		if _, ok := usageIndex[wire.ProtocolUse(v)]; !ok {
			t.Errorf("protocol %s has no usage counter", v)
		}
	}
	if len(usageIndex) != len(wire.UsageKeys) {
		t.Errorf("usage keys %q repeat one", wire.UsageKeys)
	}
}
