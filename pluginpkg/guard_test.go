package pluginpkg

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
)

// guardHome installs kv (storage.kv 1.2.0), kv2 (storage.kv 2.0.0),
// memory (requires storage.kv ^1.0), search (requires storage.kv), cache
// (requires storage.kv ^1 optionally) and other (requires nothing).
func guardHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	manifests := map[string]string{
		"kv":     `"provides":[{"capability":"storage.kv","version":"1.2.0"}]`,
		"kv2":    `"provides":[{"capability":"storage.kv","version":"2.0.0"}]`,
		"memory": `"requires":[{"capability":"storage.kv","version":"^1.0"}]`,
		"search": `"requires":[{"capability":"storage.kv"}]`,
		"cache":  `"requires":[{"capability":"storage.kv","version":"^1","optional":true}]`,
		"other":  `"description":"needs nothing"`,
	}
	for name, body := range manifests {
		writeFile(t, home, "packages/"+name+"/plugin.json", `{"format":1,"name":"`+name+`","version":"1.0.0",`+body+`}`)
	}
	return home
}

func names(ds []Dependent) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Package+":"+string(d.Requirement.Key))
	}
	return out
}

func TestDependents(t *testing.T) {
	home := guardHome(t)
	host := []capability.Provided{{Key: "storage.kv", Version: semver.MustParse("1.5.0")}}
	tests := []struct {
		name     string
		disabled []string
		pkg      string
		host     []capability.Provided
		want     []string
	}{
		{"only provider of ^1.0", nil, "kv", nil, []string{"memory:storage.kv"}},
		{"host provides", nil, "kv", host, nil},
		{"another provider satisfies", nil, "kv2", nil, nil},
		{"the other provider is disabled", []string{"kv2"}, "kv", nil, []string{"memory:storage.kv", "search:storage.kv"}},
		{"a disabled dependent", []string{"memory"}, "kv", nil, nil},
		{"disabled itself", []string{"kv"}, "kv", nil, nil},
		{"provides nothing", nil, "other", nil, nil},
		{"not installed", nil, "nosuch", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := LoadInstalled(home)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range inst.Packages {
				for _, d := range tt.disabled {
					if p.Name == d {
						p.Enabled = false
					}
				}
			}
			if got := names(inst.Dependents(tt.pkg, tt.host)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Dependents(%s) = %v, want %v", tt.pkg, got, tt.want)
			}
		})
	}
}

// TestRemoveAndDisableChecked refuses to remove or disable a package the
// host requires or others need, naming why, changing nothing; and lets
// the others through.
func TestRemoveAndDisableChecked(t *testing.T) {
	home := guardHome(t)
	if err := Disable(home, "kv2"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		op    string
		pkg   string
		guard Guard
		want  string // "" allows
	}{
		{"remove", "kv", Guard{}, "remove kv in " + home + ": memory requires storage.kv ^1.0, search requires storage.kv, which only kv provides"},
		{"disable", "kv", Guard{}, "disable kv in " + home + ": memory requires storage.kv ^1.0, search requires storage.kv, which only kv provides"},
		{"remove", "other", Guard{Required: []string{"other"}}, "remove other in " + home + ": the host requires it"},
		{"disable", "kv", Guard{Required: []string{"kv"}, Host: []capability.Provided{{Key: "storage.kv", Version: semver.MustParse("1.9.0")}}},
			"disable kv in " + home + ": the host requires it"},
		{"disable", "kv2", Guard{Required: []string{"kv2"}}, ""}, // disabled already
		{"disable", "kv", Guard{Host: []capability.Provided{{Key: "storage.kv", Version: semver.MustParse("1.9.0")}}}, ""},
		{"remove", "other", Guard{}, ""},
	}
	for _, tt := range tests {
		before := snapshotTree(t, home)
		op := RemoveChecked
		if tt.op == "disable" {
			op = DisableChecked
		}
		err := op(home, tt.pkg, tt.guard)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s %s: %v", tt.op, tt.pkg, err)
			}
			continue
		}
		var iu *InUseError
		if !errors.As(err, &iu) || !errors.Is(err, ErrInUse) || err.Error() != tt.want {
			t.Errorf("%s %s = %v, want %s", tt.op, tt.pkg, err, tt.want)
		}
		assertUnchanged(t, home, before)
	}
	if _, err := os.Stat(filepath.Join(home, "packages", "other")); !os.IsNotExist(err) {
		t.Errorf("other was not removed: %v", err)
	}
	if e := stateOf(t, home, "kv"); e.Enabled {
		t.Errorf("kv was not disabled: %+v", e)
	}
	if err := RemoveChecked(home, "nosuch", Guard{}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("RemoveChecked(nosuch) = %v", err)
	}
}
