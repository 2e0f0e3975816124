package generation

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
)

// planHome is a home of manifests (no processes are started by planning).
type planHome struct {
	t    *testing.T
	dir  string
	mans map[string]map[string]any
}

func newPlanHome(t *testing.T) *planHome {
	h := &planHome{t: t, dir: t.TempDir(), mans: map[string]map[string]any{}}
	h.put("kv", map[string]any{"provides": []any{map[string]any{"capability": "storage.kv", "version": "1.0.0"}}})
	h.put("memory", map[string]any{
		"requires": []any{map[string]any{"capability": "storage.kv", "version": "^1.0"}},
		"runtime":  map[string]any{"command": "./bin/plugin", "replaces": []any{"context.compactor"}},
	})
	h.put("redactor", map[string]any{"runtime": map[string]any{"command": "./bin/plugin", "priority": 100,
		"intercepts": []any{"tool.before"}}})
	h.put("audit", map[string]any{"runtime": map[string]any{"command": "./bin/plugin", "intercepts": []any{"tool.before"}}})
	return h
}

// put writes a manifest: fields override the defaults (name, version 1.0.0,
// format 1, a runtime ./bin/plugin), and writes the executable.
func (h *planHome) put(name string, fields map[string]any) {
	m := map[string]any{"format": 1, "name": name, "version": "1.0.0", "runtime": map[string]any{"command": "./bin/plugin"}}
	for k, v := range fields {
		m[k] = v
	}
	h.mans[name] = m
	h.write(name)
	h.exe(name, "v1")
}

func (h *planHome) write(name string) {
	dir := filepath.Join(h.dir, "packages", name)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		h.t.Fatal(err)
	}
	data, _ := json.Marshal(h.mans[name])
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *planHome) exe(name, content string) {
	if err := os.WriteFile(filepath.Join(h.dir, "packages", name, "bin", "plugin"), []byte(content), 0o755); err != nil {
		h.t.Fatal(err)
	}
}

func (h *planHome) inputs() Inputs {
	inst, err := pluginpkg.LoadInstalled(h.dir)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(inst.Warnings) > 0 {
		h.t.Fatalf("home warnings: %v", inst.Warnings)
	}
	return Inputs{Installed: inst, Spec: contribution.HostSpec{Points: []contribution.Point{"tool.before"},
		Slots: []contribution.Slot{"context.compactor"}}}
}

// snapshotOf plans from nothing and returns the desired side as if it had
// been built as generation 1, with the manifest predictions as its
// contributions.
func snapshotOf(t *testing.T, in Inputs) *Snapshot {
	t.Helper()
	s, _, err := desired(in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	(&Plan{}).predict(&Snapshot{}, s, nil, nil)
	s.Generation = 1
	for i := range s.Packages {
		if s.Packages[i].Status == statusPlanned {
			s.Packages[i].Status = StatusRunning
		}
	}
	return s
}

func TestPlanReasons(t *testing.T) {
	tests := []struct {
		name   string
		change func(h *planHome, in *Inputs)
		want   map[string]string // name -> "class: reasons"
	}{
		{"nothing", func(*planHome, *Inputs) {}, nil},
		{"version", func(h *planHome, _ *Inputs) { h.mans["audit"]["version"] = "1.1.0"; h.write("audit") },
			map[string]string{"audit": "reloaded: version 1.0.0 -> 1.1.0"}},
		{"manifest content", func(h *planHome, _ *Inputs) { h.mans["audit"]["description"] = "now described"; h.write("audit") },
			map[string]string{"audit": "reloaded: manifest changed"}},
		{"executable", func(h *planHome, _ *Inputs) { h.exe("audit", "v2, longer") },
			map[string]string{"audit": "reloaded: package files changed (bin/plugin)"}},
		{"config", func(_ *planHome, in *Inputs) {
			in.Launch = map[string]Launch{"audit": {Config: json.RawMessage(`{"verbose":true}`)}}
		}, map[string]string{"audit": "reloaded: config changed"}},
		{"env", func(_ *planHome, in *Inputs) {
			in.Launch = map[string]Launch{"audit": {Env: map[string]string{"MODE": "strict"}}}
		}, map[string]string{"audit": "reloaded: config changed"}},
		{"secret env", func(_ *planHome, in *Inputs) {
			in.Launch = map[string]Launch{"audit": {Env: map[string]string{"TOKEN": "t0"}, SecretEnv: []string{"TOKEN"}}}
		}, map[string]string{"audit": "reloaded: config changed"}},
		{"limits", func(_ *planHome, in *Inputs) {
			in.Launch = map[string]Launch{"audit": {Limits: pluginpkg.ResourceLimits{OpenFiles: 64}}}
		}, map[string]string{"audit": "reloaded: config changed"}},
		{"policy", func(_ *planHome, in *Inputs) {
			in.Launch = map[string]Launch{"audit": {Required: true}}
		}, map[string]string{"audit": "reloaded: policy optional -> required"}},
		{"provider reloaded", func(h *planHome, _ *Inputs) { h.mans["kv"]["description"] = "x"; h.write("kv") },
			map[string]string{"kv": "reloaded: manifest changed", "memory": `reloaded: depends on "kv", which is reloaded`}},
		{"added and removed", func(h *planHome, _ *Inputs) {
			if err := os.RemoveAll(filepath.Join(h.dir, "packages", "audit")); err != nil {
				h.t.Fatal(err)
			}
			h.put("search", nil)
		}, map[string]string{"audit": "removed: ", "search": "added: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newPlanHome(t)
			from := snapshotOf(t, h.inputs())
			in := h.inputs()
			tt.change(h, &in)
			in.Installed = h.inputs().Installed
			p, err := NewPlan(from, in)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, c := range p.Packages {
				if c.Class != ClassUnchanged {
					got[c.Name] = string(c.Class) + ": " + strings.Join(c.Reasons, "; ")
				}
			}
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changes = %v, want %v", got, tt.want)
			}
			if p.Changed() != (tt.want != nil || tt.name == "policy" || tt.name == "config") {
				t.Errorf("Changed() = %v", p.Changed())
			}
		})
	}
}

// TestPlanDownMember: a member that is down is reloaded, unless the inputs
// keep it down (Inputs.KeepFailed) and it did not change itself.
func TestPlanDownMember(t *testing.T) {
	const kept = "not running in generation 1 (%s); kept down: past its budget"
	for _, tt := range []struct {
		name   string
		down   string // the member that is down in the snapshot
		status MemberStatus
		keep   bool
		change func(h *planHome)
		want   map[string]string // class and reasons of every package not unchanged
		reason string            // of the down member, when it stays unchanged
	}{
		{name: "crashed", down: "audit", status: StatusCrashed,
			want: map[string]string{"audit": "reloaded: not running in generation 1 (crashed)"}},
		{name: "failed", down: "audit", status: StatusFailed,
			want: map[string]string{"audit": "reloaded: not running in generation 1 (failed)"}},
		{name: "kept down", down: "audit", status: StatusCrashed, keep: true, reason: fmt.Sprintf(kept, "crashed")},
		{name: "kept down, failed", down: "audit", status: StatusFailed, keep: true, reason: fmt.Sprintf(kept, "failed")},
		{name: "kept down but changed", down: "audit", status: StatusCrashed, keep: true,
			change: func(h *planHome) { h.exe("audit", "v2") },
			want:   map[string]string{"audit": "reloaded: package files changed (bin/plugin); not running in generation 1 (crashed)"}},
		{name: "kept down, its provider changed", down: "memory", status: StatusCrashed, keep: true,
			change: func(h *planHome) { h.exe("kv", "v2") },
			want:   map[string]string{"kv": "reloaded: package files changed (bin/plugin)"}, reason: fmt.Sprintf(kept, "crashed")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newPlanHome(t)
			from := snapshotOf(t, h.inputs())
			from.pkg(tt.down).Status = tt.status
			if tt.change != nil {
				tt.change(h)
			}
			in := h.inputs()
			if tt.keep {
				in.KeepFailed = map[string]string{tt.down: "past its budget"}
			}
			p, err := NewPlan(from, in)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, c := range p.Packages {
				switch {
				case c.Class != ClassUnchanged:
					got[c.Name] = string(c.Class) + ": " + strings.Join(c.Reasons, "; ")
				case c.Name == tt.down && strings.Join(c.Reasons, "; ") != tt.reason:
					t.Errorf("%s: reasons %q, want %q", c.Name, c.Reasons, tt.reason)
				case c.Name != tt.down && len(c.Reasons) > 0:
					t.Errorf("%s: unchanged with reasons %q", c.Name, c.Reasons)
				}
			}
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changes = %v, want %v", got, tt.want)
			}
			if p.Changed() != (tt.want != nil) {
				t.Errorf("Changed() = %v, want %v", p.Changed(), tt.want != nil)
			}
		})
	}
}

func TestPlanContributionsAndProblems(t *testing.T) {
	h := newPlanHome(t)
	from := snapshotOf(t, h.inputs())
	h.put("summarizer", map[string]any{"runtime": map[string]any{"command": "./bin/plugin", "replaces": []any{"context.compactor"},
		"intercepts": []any{"tool.before"}, "priority": 500}})
	h.put("needy", map[string]any{"runtime": map[string]any{"command": "./bin/plugin", "required": true},
		"requires": []any{map[string]any{"capability": "net.http", "version": "^1.0"}}})
	p, err := NewPlan(from, h.inputs())
	if err != nil {
		t.Fatal(err)
	}
	wantChains := []ChainDiff{{Point: "tool.before", Before: []string{"redactor", "audit"},
		After: []string{"summarizer", "redactor", "audit"}, Changed: true}}
	wantChains[0].After, wantChains[0].Changed = []string{"redactor", "audit"}, false // summarizer would be left out
	if !reflect.DeepEqual(p.Interceptors, wantChains) {
		t.Errorf("interceptors = %+v", p.Interceptors)
	}
	wantSlots := []SlotDiff{{Slot: "context.compactor", Before: "memory", After: "", Changed: true}}
	if !reflect.DeepEqual(p.Slots, wantSlots) {
		t.Errorf("slots = %+v", p.Slots)
	}
	wantProblems := []string{
		`required plugin "needy" cannot run: package "needy" requires net.http ^1.0: no installed package provides net.http`,
	}
	if !reflect.DeepEqual(p.Problems, wantProblems) {
		t.Errorf("problems =\n%q\nwant\n%q", p.Problems, wantProblems)
	}
	if len(p.Pending) != 2 {
		t.Errorf("pending = %q, want notes for needy and summarizer", p.Pending)
	}
	// Naming the owner resolves the conflict.
	in := h.inputs()
	in.Spec.SlotOwners = map[contribution.Slot]string{"context.compactor": "summarizer"}
	p, _ = NewPlan(from, in)
	if p.Slots[0].After != "summarizer" || len(p.Problems) != 1 {
		t.Errorf("with an owner: slots %+v problems %q", p.Slots, p.Problems)
	}
}

// TestPlanLeftOut: slot claims that a build would resolve by leaving
// optional plugins out are warnings naming each plugin and the rule (the
// registry's words, as a build's), with the plugins requiring them;
// required claimants in conflict are a problem. A slot the host does not
// declare is ignored with the registry's warning unless the spec is
// strict, as a build does (issue 26 item 6).
func TestPlanLeftOut(t *testing.T) {
	claim := func(required bool) map[string]any {
		return map[string]any{"runtime": map[string]any{"command": "./bin/plugin", "required": required,
			"replaces": []any{"context.compactor"}}}
	}
	const rule = `slot "context.compactor" is claimed by both "memory" (manifest) and "summarizer" (manifest); ` +
		`name its owner in the host config's slot_owners`
	undeclared := func(name string) string {
		return `"` + name + `" (manifest) contributes strategy to slot "context.compactor", which the host does not declare; ` +
			`it is ignored (declared slots: none)`
	}
	tests := []struct {
		name           string
		memoryRequired bool
		summarizer     map[string]any
		owner          string
		undeclared     bool // the host declares no slot
		strict         bool
		wantProblems   []string
		wantWarnings   []string
		wantOwner      string
	}{
		{name: "undeclared slot, not strict", summarizer: claim(false), undeclared: true, wantProblems: []string{},
			wantWarnings: []string{undeclared("memory"), undeclared("summarizer")}},
		{name: "undeclared slot, strict", summarizer: claim(false), undeclared: true, strict: true, wantProblems: []string{},
			wantWarnings: []string{
				`optional plugin "memory" would be left out of the generation: ` + undeclared("memory"),
				`optional plugin "summarizer" would be left out of the generation: ` + undeclared("summarizer"),
			}},
		{name: "undeclared slot, strict, required", memoryRequired: true, summarizer: claim(false), undeclared: true, strict: true,
			// The build would fail with every problem of its registry.
			wantProblems: []string{undeclared("memory"), undeclared("summarizer")}, wantWarnings: []string{},
			wantOwner: "memory, summarizer"},
		{name: "two optional claimants", summarizer: claim(false), wantProblems: []string{}, wantWarnings: []string{
			`optional plugin "memory" would be left out of the generation: ` + rule,
			`optional plugin "summarizer" would be left out of the generation: ` + rule,
		}},
		{name: "required against optional", memoryRequired: true, summarizer: claim(false), wantProblems: []string{},
			wantWarnings: []string{`optional plugin "summarizer" would be left out of the generation: ` + rule}, wantOwner: "memory"},
		{name: "two required claimants", memoryRequired: true, summarizer: claim(true), wantProblems: []string{rule},
			wantWarnings: []string{}, wantOwner: "memory, summarizer"},
		{name: "owner named", summarizer: claim(false), owner: "summarizer", wantProblems: []string{}, wantWarnings: []string{
			`slot "context.compactor": the claim of "memory" (manifest) is overridden by "summarizer" (manifest), ` +
				`the owner named in the host config's slot_owners`,
		}, wantOwner: "summarizer"},
		{name: "cascade to a dependent", summarizer: map[string]any{
			"provides": []any{map[string]any{"capability": "text.summary", "version": "1.0.0"}},
			"runtime":  map[string]any{"command": "./bin/plugin", "replaces": []any{"context.compactor"}},
		}, memoryRequired: true, wantProblems: []string{}, wantWarnings: []string{
			`optional plugin "reader" would be left out: requires text.summary ^1.0, provided by "summarizer", which failed: left out of the generation: ` + rule,
			`optional plugin "summarizer" would be left out of the generation: ` + rule,
		}, wantOwner: "memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newPlanHome(t)
			h.mans["memory"]["runtime"].(map[string]any)["required"] = tt.memoryRequired
			h.write("memory")
			h.put("summarizer", tt.summarizer)
			if strings.HasPrefix(tt.name, "cascade") {
				h.put("reader", map[string]any{"requires": []any{map[string]any{"capability": "text.summary", "version": "^1.0"}}})
			}
			in := h.inputs()
			if tt.owner != "" {
				in.Spec.SlotOwners = map[contribution.Slot]string{"context.compactor": tt.owner}
			}
			if tt.undeclared {
				in.Spec.Slots = nil
			}
			in.Spec.Strict = tt.strict
			p, err := NewPlan(&Snapshot{Format: SnapshotFormat}, in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Problems, tt.wantProblems) || !reflect.DeepEqual(p.Warnings, tt.wantWarnings) {
				t.Errorf("problems %q\nwarnings %q\nwant %q\n%q", p.Problems, p.Warnings, tt.wantProblems, tt.wantWarnings)
			}
			got := ""
			if len(p.Slots) > 0 {
				got = p.Slots[0].After
			}
			if got != tt.wantOwner {
				t.Errorf("slot owner after = %q, want %q", got, tt.wantOwner)
			}
		})
	}
}

func TestDiffMatchesPlan(t *testing.T) {
	h := newPlanHome(t)
	a := snapshotOf(t, h.inputs())
	h.mans["audit"]["version"] = "2.0.0"
	h.write("audit")
	h.put("search", nil)
	in := h.inputs()
	plan, err := NewPlan(a, in)
	if err != nil {
		t.Fatal(err)
	}
	b := snapshotOf(t, in)
	b.Generation = 2
	d := Diff(a, b)
	if !reflect.DeepEqual(d.Packages, plan.Packages) {
		t.Errorf("diff packages %+v\nplan packages %+v", d.Packages, plan.Packages)
	}
	if !reflect.DeepEqual(d.Interceptors, plan.Interceptors) || !reflect.DeepEqual(d.Slots, plan.Slots) {
		t.Errorf("diff contributions %+v %+v\nplan %+v %+v", d.Interceptors, d.Slots, plan.Interceptors, plan.Slots)
	}
}

func TestSnapshotRoundTripAndFutureFields(t *testing.T) {
	h := newPlanHome(t)
	in := h.inputs()
	in.Host = []capability.Provided{{Key: "host.log", Version: semver.MustParse("1.0.0")}}
	s := snapshotOf(t, in)
	path := filepath.Join(t.TempDir(), "state", "snapshot.json")
	if err := WriteSnapshot(path, s); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(s, back); d.Changed() {
		t.Errorf("round trip changed the snapshot: %+v", d)
	}
	data, _ := os.ReadFile(path)
	future := strings.Replace(string(data), `"format": 1,`, `"format": 1, "added_in_1_1": {"x": [1]},`, 1)
	if _, err := parseSnapshot("future.json", []byte(future)); err != nil {
		t.Errorf("unknown field not tolerated: %v", err)
	}
	newer := strings.Replace(string(data), `"format": 1,`, `"format": 2,`, 1)
	if _, err := parseSnapshot("newer.json", []byte(newer)); err == nil ||
		err.Error() != "snapshot newer.json: format 2 is not supported (this build reads format 1)" {
		t.Errorf("newer format: %v", err)
	}
}
