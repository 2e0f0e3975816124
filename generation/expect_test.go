package generation

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
)

func TestExpectedPackages(t *testing.T) {
	tests := []struct {
		name   string
		spoil  func(h *planHome)
		expect Expected
		want   []string // Build's and NewPlan's problems
	}{
		{"loaded and enabled", func(*planHome) {}, Expected{Name: "audit", Why: "the host config requires it"}, nil},
		{"manifest does not parse", func(h *planHome) {
			if err := os.WriteFile(filepath.Join(h.dir, "packages", "audit", "plugin.json"), []byte(`{`), 0o644); err != nil {
				h.t.Fatal(err)
			}
		}, Expected{Name: "audit", Why: "why"}, []string{
			`required package "audit": packages/audit/plugin.json: invalid JSON at line 1, column 2: unexpected end of JSON input; why`}},
		{"not installed", func(h *planHome) {
			if err := os.RemoveAll(filepath.Join(h.dir, "packages", "audit")); err != nil {
				h.t.Fatal(err)
			}
		}, Expected{Name: "audit", Why: "why"}, []string{
			`required package "audit": packages/audit: not installed (the package directory is missing); why`}},
		{"disabled", func(h *planHome) { disable(h) }, Expected{Name: "audit", Why: "why"}, []string{
			`required package "audit": state.json: disabled by the operator (enable it, or do not require it); why`}},
		{"disabled, may be", func(h *planHome) { disable(h) }, Expected{Name: "audit", Why: "why", MayDisable: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newPlanHome(t)
			from := snapshotOf(t, h.inputs())
			tt.spoil(h)
			inst, err := pluginpkg.LoadInstalled(h.dir)
			if err != nil {
				t.Fatal(err)
			}
			in := Inputs{Installed: inst, Expect: []Expected{tt.expect}}
			p, err := NewPlan(from, in)
			if err != nil {
				t.Fatal(err)
			}
			if got := filter(p.Problems, `required package "audit"`); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan problems = %q, want %q", got, tt.want)
			}
			var got []string
			for _, e := range in.Unavailable() {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Unavailable = %q, want %q (a build fails with them)", got, tt.want)
			}
		})
	}
}

func disable(h *planHome) {
	if err := pluginpkg.Disable(h.dir, "audit"); err != nil {
		h.t.Fatal(err)
	}
}

func filter(problems []string, prefix string) []string {
	var out []string
	for _, p := range problems {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

func TestNewRestartPlan(t *testing.T) {
	h := newPlanHome(t)
	in := h.inputs()
	from := snapshotOf(t, in)
	for i := range from.Packages { // audit and memory are down
		switch from.Packages[i].Name {
		case "audit":
			from.Packages[i].Status = StatusCrashed
		case "memory":
			from.Packages[i].Status = StatusFailed
		}
	}
	for _, tt := range []struct {
		name    string
		restart []string
		want    map[string]string // name -> "class: reasons"
	}{
		{"a crashed plugin", []string{"audit"}, map[string]string{"audit": "reloaded: [not running in generation 1 (crashed)]",
			"kv": "unchanged: []", "memory": "unchanged: []", "redactor": "unchanged: []"}},
		{"a running plugin", []string{"redactor"}, map[string]string{"audit": "unchanged: []",
			"kv": "unchanged: []", "memory": "unchanged: []", "redactor": "reloaded: [restart requested]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewRestartPlan(from, in, tt.restart...)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, c := range p.Packages {
				got[c.Name] = string(c.Class) + ": [" + strings.Join(c.Reasons, " ") + "]"
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("classes = %v\nwant %v", got, tt.want)
			}
			if !p.Changed() {
				t.Error("a restart plan must change something")
			}
		})
	}
}

// TestWithheld: a confined package asking for more than the operator
// accepted is withheld; a plan predicts it left out (a warning when
// optional, a problem when required), cascading to what requires it.
func TestWithheld(t *testing.T) {
	const reason = "permissions widened: + net.connect api.example.com:443; + exec git (not accepted by the operator)"
	tests := []struct {
		name                   string
		mode                   string
		required               bool
		want                   []string // Withheld
		wantProblems, wantWarn []string
	}{
		{name: "confinement off", mode: pluginpkg.ConfineOff, wantProblems: []string{}, wantWarn: []string{}},
		{name: "optional", mode: pluginpkg.ConfineBestEffort,
			want: []string{`package "kv": packages/kv/plugin.json: ` + reason}, wantProblems: []string{}, wantWarn: []string{
				`optional plugin "kv" would be left out of the generation: ` + reason,
				`optional plugin "memory" would be left out: requires storage.kv ^1.0, provided by "kv", which failed: left out of the generation: ` + reason,
			}},
		{name: "required", mode: pluginpkg.ConfineRequire, required: true,
			want: []string{`package "kv": packages/kv/plugin.json: ` + reason}, wantProblems: []string{
				`required plugin "kv" cannot run: left out of the generation: ` + reason,
			}, wantWarn: []string{
				`optional plugin "memory" would be left out: requires storage.kv ^1.0, provided by "kv", which failed: left out of the generation: ` + reason,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newPlanHome(t)
			h.mans["kv"]["permissions"] = map[string]any{"net": map[string]any{"connect": []any{"api.example.com:443"}}, "exec": []any{"git"}}
			h.write("kv")
			state := `{"format":1,"packages":{"kv":{"enabled":true,"accepted_permissions":{"fs":{"read":["${package}"]}}}}}`
			if err := os.WriteFile(filepath.Join(h.dir, pluginpkg.StateFile), []byte(state), 0o644); err != nil {
				t.Fatal(err)
			}
			in := h.inputs()
			in.Launch = map[string]Launch{"kv": {Required: tt.required, Confinement: pluginpkg.Confinement{Mode: tt.mode}}}
			var got []string
			for _, e := range in.Withheld() {
				got = append(got, e.Error())
				var we *pluginpkg.PermissionsWidenedError
				if !errors.As(e, &we) || !reflect.DeepEqual(we.Added, []string{"net.connect api.example.com:443", "exec git"}) {
					t.Errorf("%v: want a *pluginpkg.PermissionsWidenedError adding net.connect and exec", e)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Withheld = %q, want %q", got, tt.want)
			}
			p, err := NewPlan(&Snapshot{Format: SnapshotFormat}, in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Problems, tt.wantProblems) || !reflect.DeepEqual(p.Warnings, tt.wantWarn) {
				t.Errorf("problems %q\nwarnings %q\nwant %q\n%q", p.Problems, p.Warnings, tt.wantProblems, tt.wantWarn)
			}
		})
	}
}
