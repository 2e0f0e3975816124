package config

import (
	"reflect"
	"testing"

	"github.com/extkernel/extkernel/contribution"
)

// TestParseKinds reads kernel.json's kinds: the built-in kinds and
// the declared ones, or every problem with its key path.
func TestParseKinds(t *testing.T) {
	tests := []struct {
		name  string
		kinds string
		want  []contribution.KindSpec
		err   string
	}{
		{name: "none", kinds: `[]`},
		{name: "every policy and target", kinds: `[{"kind": "tool", "policy": "unique", "target": "none"},
			{"kind": "hook", "policy": "ordered", "target": "point"}, {"kind": "ui.panel", "policy": "exclusive", "target": "slot"},
			{"kind": "theme", "policy": "exclusive"}]`,
			want: append(contribution.DefaultKinds(),
				contribution.KindSpec{Kind: "tool", Policy: contribution.Unique, Target: contribution.TargetNone},
				contribution.KindSpec{Kind: "hook", Policy: contribution.Ordered, Target: contribution.TargetPoint},
				contribution.KindSpec{Kind: "ui.panel", Policy: contribution.Exclusive, Target: contribution.TargetSlot},
				contribution.KindSpec{Kind: "theme", Policy: contribution.Exclusive, Target: contribution.TargetNone})},
		{name: "every problem", kinds: `[{"kind": "provider", "policy": "unique"}, {"kind": "Tool", "policy": "sometimes", "target": "file"},
			{"kind": "tool", "policy": "unique"}, {"kind": "tool", "policy": "ordered"}, {"policy": "unique"}, {"kind": "hook"}]`,
			err: `k.json: kinds[0].kind: "provider" is a built-in kind; it cannot be redeclared
k.json: kinds[1].kind: "Tool" is not a valid kind: segment 1 ("Tool") contains an upper-case letter (identifiers are lower-case)
k.json: kinds[1].policy: "sometimes" is not "ordered", "exclusive" or "unique"
k.json: kinds[1].target: "file" is not "none", "point" or "slot"
k.json: kinds[3].kind: "tool" is declared twice (also kinds[2])
k.json: kinds[4].kind: kind must not be empty
k.json: kinds[5].policy: missing (one of "ordered", "exclusive", "unique")`},
		{name: "wrong types", kinds: `[{"kind": 1, "policy": "unique"}, "tool", {"kind": "x", "policy": "unique", "owner": "a"}]`,
			err: "k.json: kinds[2].owner: unknown key\n" +
				"k.json: kinds[0].kind: must be a string, got number (line 1, column 34)\n" +
				"k.json: kinds[1]: must be an object, got string (line 1, column 58)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse("k.json", []byte(`{"format": 1, "kinds": `+tt.kinds+`}`))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("err =\n%v\nwant\n%s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Kinds, tt.want) {
				t.Errorf("Kinds = %+v, want %+v", cfg.Kinds, tt.want)
			}
		})
	}
}
