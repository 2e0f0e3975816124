package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/protocol"
)

// kindsConfig is testConfig with three host kinds, one per policy.
func kindsConfig(home string) config.Config {
	cfg := testConfig(home)
	cfg.Kinds = append(contribution.DefaultKinds(),
		contribution.KindSpec{Kind: "tool", Policy: contribution.Unique},
		contribution.KindSpec{Kind: "theme", Policy: contribution.Exclusive},
		contribution.KindSpec{Kind: "hook", Policy: contribution.Ordered, Target: contribution.TargetPoint},
	)
	return cfg
}

// contributor is a scripted plugin whose manifest authorizes, and whose
// handshake declares, the contributions specs name ("kind:key[@prio]
// [=behaviour]").
func contributor(name string, required bool, specs ...string) plug {
	p := plug{name: name, required: required, contribute: specs, contributes: map[string][]string{}}
	for _, s := range specs {
		target, _, _ := strings.Cut(s, "=")
		target, _, _ = strings.Cut(target, "@")
		kind, key, _ := strings.Cut(target, ":")
		p.contributes[kind] = append(p.contributes[kind], key)
	}
	return p
}

// startErr starts a kernel on cfg and returns Start's error, the kernel
// closed.
func startErr(t *testing.T, cfg config.Config) error {
	t.Helper()
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = k.Start(context.Background())
	if cerr := k.Close(context.Background()); cerr != nil {
		t.Errorf("Close: %v", cerr)
	}
	noChildren(t)
	return err
}

// TestInvoke invokes a Go plugin's contributions of host kinds: the
// output comes back, and every refusal says why.
func TestInvoke(t *testing.T) {
	k := startKernel(t, kindsConfig(writeHome(t,
		contributor("search", false, "tool:search.web", "tool:fail=fail", "theme:ui.theme=read"))))
	ctx := context.Background()
	tools := k.Current().Registry().OfKind("tool")
	var keys []string
	for _, c := range tools {
		keys = append(keys, c.Key)
	}
	if !slices.Equal(keys, []string{"fail", "search.web"}) {
		t.Errorf("OfKind(tool) keys = %q, want fail, search.web", keys)
	}
	if got := tools[1].Payload; got != (contribution.Custom{Title: "tool search.web", Data: `{"by":"search"}`}) {
		t.Errorf("search.web payload = %#v", got)
	}
	out, err := k.Invoke(ctx, "tool", "search.web", json.RawMessage(`"go"`))
	if err != nil || string(out) != `{"input":"go","key":"search.web","kind":"tool","plugin":"search"}` {
		t.Errorf("Invoke(tool, search.web) = %s, %v", out, err)
	}
	tests := []struct {
		name       string
		kind       contribution.Kind
		key        string
		unknown    bool // wraps ErrUnknownTarget
		pluginCode int  // a *PluginError with this protocol code
		message    string
	}{
		{name: "handler error", kind: "tool", key: "fail", pluginCode: protocol.CodePluginError,
			message: `plugin "search": tool "fail": `},
		{name: "read only", kind: "theme", key: "ui.theme", pluginCode: protocol.CodeUnknownTarget,
			message: `theme "ui.theme" has no handler: the host only reads it`},
		{name: "unknown key", kind: "tool", key: "nope", unknown: true, message: `tool "nope": no such contribution in generation 1`},
		{name: "undeclared kind", kind: "widget", key: "x", unknown: true, message: `kind "widget" is not one the host declares`},
		{name: "built-in kind", kind: contribution.KindProvider, key: "plugin/search/x", message: `kind "provider" is built in`},
		{name: "ordered kind", kind: "hook", key: "tool.before", message: `kind "hook" is ordered, with any number of contributions per key: use InvokeEach`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := k.Invoke(ctx, tt.kind, tt.key, nil)
			if err == nil || !strings.Contains(err.Error(), tt.message) || errors.Is(err, ErrUnknownTarget) != tt.unknown {
				t.Fatalf("err = %v, want one containing %q (unknown target: %v)", err, tt.message, tt.unknown)
			}
			var pe *PluginError
			var we *protocol.Error
			if tt.pluginCode != 0 && (!errors.As(err, &pe) || pe.Plugin != "search" || pe.Kind != tt.kind || pe.Key != tt.key ||
				pe.Required || !errors.As(err, &we) || we.Code != tt.pluginCode) {
				t.Errorf("err = %#v, want a *PluginError of optional search at %s %q with code %d", err, tt.kind, tt.key, tt.pluginCode)
			}
		})
	}
}

// TestCustomKindPolicies holds each policy of a host kind, declared by
// real plugins in their handshakes: an ordered kind keeps every
// contribution in effective order, an exclusive kind's two claims and a
// unique kind's two declarations fail the build naming both plugins when
// they are required, and leave both out when they are optional.
func TestCustomKindPolicies(t *testing.T) {
	t.Run("ordered: priority, then plugin name", func(t *testing.T) {
		k := startKernel(t, kindsConfig(writeHome(t,
			contributor("bravo", false, "hook:tool.before"), contributor("alpha", false, "hook:tool.before"),
			contributor("zulu", false, "hook:tool.before@50"), contributor("mike", false, "hook:tool.before@-5=fail"),
			contributor("lost", false, "hook:tool.nowhere"))))
		var order []string
		for _, c := range k.Current().Registry().Get("hook", "tool.before") {
			order = append(order, c.Source.Plugin)
		}
		if want := []string{"zulu", "alpha", "bravo", "mike"}; !slices.Equal(order, want) {
			t.Errorf("hook order = %q, want %q", order, want)
		}
		if ws := strings.Join(k.Current().Warnings(), "\n"); !strings.Contains(ws, `"lost" (handshake) contributes hook to point "tool.nowhere", which the host does not declare`) {
			t.Errorf("warnings lack the undeclared point:\n%s", ws)
		}
		answers, err := k.InvokeEach(context.Background(), "hook", "tool.before", json.RawMessage(`1`))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range answers {
			var out struct{ Plugin string }
			_ = json.Unmarshal(a.Output, &out)
			switch {
			case a.Err != nil && strings.Contains(a.Err.Error(), "mike failed on purpose"):
				got = append(got, a.Plugin+":failed")
			case a.Err == nil && out.Plugin == a.Plugin:
				got = append(got, a.Plugin)
			default:
				t.Errorf("answer %+v", a)
			}
		}
		if want := []string{"zulu", "alpha", "bravo", "mike:failed"}; !slices.Equal(got, want) {
			t.Errorf("InvokeEach = %q, want %q", got, want)
		}
		if answers, err := k.InvokeEach(context.Background(), "hook", "tool.after", nil); err != nil || len(answers) != 0 {
			t.Errorf("InvokeEach at a key without contributions = %v, %v; want none", answers, err)
		}
	})
	t.Run("ordered: a required failure stops the run", func(t *testing.T) {
		k := startKernel(t, kindsConfig(writeHome(t,
			contributor("alpha", true, "hook:tool.before=fail"), contributor("bravo", false, "hook:tool.before"))))
		_, err := k.InvokeEach(context.Background(), "hook", "tool.before", nil)
		var pe *PluginError
		if !errors.As(err, &pe) || pe.Plugin != "alpha" || !pe.Required {
			t.Errorf("err = %v, want alpha's required *PluginError", err)
		}
	})
	conflicts := []struct {
		name      string
		plugs     func(required bool) []plug
		problem   string
		invokeKey string
		kind      contribution.Kind
	}{
		{name: "exclusive", kind: "theme", invokeKey: "ui.theme",
			plugs: func(r bool) []plug {
				return []plug{contributor("dark", r, "theme:ui.theme"), contributor("light", r, "theme:ui.theme")}
			},
			problem: `theme "ui.theme" is claimed by both "dark" (handshake) and "light" (handshake); only one plugin may claim it; disable the others`},
		{name: "unique", kind: "tool", invokeKey: "search.web",
			plugs: func(r bool) []plug {
				return []plug{contributor("bing", r, "tool:search.web"), contributor("duck", r, "tool:search.web")}
			},
			problem: `tool "search.web" is declared by both "bing" (handshake) and "duck" (handshake); each tool key may be declared once`},
	}
	for _, tt := range conflicts {
		t.Run(tt.name+": required plugins fail the build", func(t *testing.T) {
			err := startErr(t, kindsConfig(writeHome(t, tt.plugs(true)...)))
			var re *contribution.RegistryError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.problem) {
				t.Fatalf("Start = %v, want a registry error with\n%s", err, tt.problem)
			}
		})
		t.Run(tt.name+": optional plugins are left out", func(t *testing.T) {
			k := startKernel(t, kindsConfig(writeHome(t, tt.plugs(false)...)))
			for _, p := range tt.plugs(false) {
				if m := k.Current().Member(p.name); m.Status != generation.StatusFailed || !strings.Contains(m.Reason, tt.problem) {
					t.Errorf("%s: %s %q, want left out for the conflict", p.name, m.Status, m.Reason)
				}
			}
			if _, err := k.Invoke(context.Background(), tt.kind, tt.invokeKey, nil); !errors.Is(err, ErrUnknownTarget) {
				t.Errorf("Invoke after both were left out = %v, want ErrUnknownTarget", err)
			}
		})
	}
}

// TestContributionAuthorization: a contribution the manifest does not
// list, or of a kind the host does not declare, is a handshake
// declaration problem: an optional plugin fails (and is reported), a
// required one fails the start.
func TestContributionAuthorization(t *testing.T) {
	unlisted := contributor("rogue", false, "tool:search.web")
	unlisted.contribute = append(unlisted.contribute, "tool:shell.run")
	tests := []struct {
		name  string
		p     plug
		kinds bool // the host declares kindsConfig's kinds
		want  string
	}{
		{"key not in runtime.contributes", unlisted, true,
			`contributions[1]: tool "shell.run" is not listed in runtime.contributes under "tool"`},
		{"kind the host does not declare", contributor("rogue", false, "widget:x"), true,
			`contributions[0]: kind "widget" is not one the host declares (declared: hook, theme, tool)`},
		{"host declaring no kind", contributor("rogue", false, "tool:search.web"), false,
			`contributions[0]: kind "tool" is not one the host declares (the host declares no kind beyond the built-in ones)`},
	}
	for _, tt := range tests {
		config := func(home string) config.Config {
			if tt.kinds {
				return kindsConfig(home)
			}
			return testConfig(home)
		}
		t.Run(tt.name+": optional", func(t *testing.T) {
			k := startKernel(t, config(writeHome(t, tt.p, plug{name: "healthy", env: map[string]string{"SCRIPT_PROVIDERS": "get"}})))
			if m := k.Current().Member("rogue"); m.Status != generation.StatusFailed || !strings.Contains(m.Reason, tt.want) {
				t.Errorf("rogue: %s %q, want failed with %q", m.Status, m.Reason, tt.want)
			}
			if out, err := k.CallProvider(context.Background(), "plugin/healthy/get", json.RawMessage(`1`)); err != nil || string(out) != "1" {
				t.Errorf("the healthy plugin: %s, %v", out, err)
			}
		})
		t.Run(tt.name+": required", func(t *testing.T) {
			p := tt.p
			p.required = true
			if err := startErr(t, config(writeHome(t, p))); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestContributionsBeside10Plugin runs a protocol 1.0 plugin with no SDK
// (bash) beside a contributor, under a host declaring kinds: the 1.0
// plugin works unchanged and contributes nothing.
func TestContributionsBeside10Plugin(t *testing.T) {
	home, _ := scriptHome(t)
	src := writeHome(t, contributor("search", false, "tool:search.web"))
	if err := os.Rename(filepath.Join(src, "packages", "search"), filepath.Join(home, "packages", "search")); err != nil {
		t.Fatal(err)
	}
	k := startKernel(t, kindsConfig(home))
	ctx := context.Background()
	if out, err := k.CallProvider(ctx, "plugin/bash-script/version", nil); err != nil || string(out) != `"v1"` {
		t.Errorf("the 1.0 plugin's provider: %s, %v", out, err)
	}
	var by []string
	for _, c := range k.Current().Registry().All() {
		if c.Kind != contribution.KindProvider {
			by = append(by, string(c.Kind)+" "+c.Key+" "+c.Source.Plugin)
		}
	}
	if !slices.Equal(by, []string{"tool search.web search"}) {
		t.Errorf("contributions = %q, want the contributor's tool alone", by)
	}
	if _, err := k.Invoke(ctx, "tool", "search.web", nil); err != nil {
		t.Errorf("Invoke: %v", err)
	}
}

// TestInvokeCrossLanguage installs the Python and the Node example
// plugins, which contribute the tool "text.upper", and invokes it through
// the kernel.
func TestInvokeCrossLanguage(t *testing.T) {
	for _, tt := range []struct{ name, interpreter, dir, plugin string }{
		{"python", "python3", "python", "example-python"},
		{"node", "node", "node", "example-node"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proctest.Interpreter(t, tt.interpreter)
			home := t.TempDir()
			dst := filepath.Join(home, "packages", tt.plugin)
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join("..", "sdk", tt.dir)
			for _, f := range []string{"plugin.json", "example_plugin.py", "example_plugin.js", "extkernel.py", "extkernel.js"} {
				data, err := os.ReadFile(filepath.Join(src, f))
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			k := startKernel(t, kindsConfig(home))
			cs := k.Current().Registry().Get("tool", "text.upper")
			want := contribution.Custom{Title: "Upper-case a text", Data: `{"input":{"type":"string"}}`}
			if len(cs) != 1 || cs[0].Source.Plugin != tt.plugin || !reflect.DeepEqual(compactCustom(t, cs[0].Payload), want) {
				t.Fatalf("Get(tool, text.upper) = %+v, want %s's with %+v", cs, tt.plugin, want)
			}
			out, err := k.Invoke(context.Background(), "tool", "text.upper", json.RawMessage(`"make -j8"`))
			if err != nil || string(out) != `"MAKE -J8"` {
				t.Errorf("Invoke = %s, %v", out, err)
			}
			_, err = k.Invoke(context.Background(), "tool", "text.upper", json.RawMessage(`3`))
			var we *protocol.Error
			if !errors.As(err, &we) || we.Code != protocol.CodeInvalidParams {
				t.Errorf("Invoke with a number = %v, want the plugin's -32602", err)
			}
		})
	}
}

// compactCustom returns payload, a Custom, with its Data compacted.
func compactCustom(t *testing.T, payload any) contribution.Custom {
	t.Helper()
	c, _ := payload.(contribution.Custom)
	var v any
	if err := json.Unmarshal([]byte(c.Data), &v); err != nil {
		t.Fatalf("data %q: %v", c.Data, err)
	}
	b, _ := json.Marshal(v)
	c.Data = string(b)
	return c
}
