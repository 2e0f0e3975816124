package generation

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// TestCustomContributions converts a handshake's contributions of host
// kinds: the key as declared (not namespaced), the manifest's priority
// unless the declaration has its own, a Custom payload; and the sidecar
// gets the manifest's runtime.contributes and the host's kinds.
func TestCustomContributions(t *testing.T) {
	m, err := pluginpkg.Parse("packages/tools/plugin.json", []byte(`{"format": 1, "name": "tools", "version": "1.2.0",
		"runtime": {"command": "./tools", "priority": 7, "contributes": {"tool": ["search.web"], "hook": ["tool.before"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	pkg := &pluginpkg.Package{Name: "tools", Manifest: m}
	ten := 10
	got := Contributions(&Member{Package: pkg}, &protocol.InitializeResult{Contributions: []protocol.ContributionDecl{
		{Kind: "tool", Key: "search.web", Title: "Web search", Data: json.RawMessage(`{"schema":{"type":"string"}}`)},
		{Kind: "hook", Key: "tool.before", Priority: &ten},
	}})
	src := contribution.PluginSource("tools", "1.2.0", contribution.OriginHandshake)
	want := []contribution.Contribution{
		{Kind: "tool", Key: "search.web", Source: src, Priority: 7, Seq: 0,
			Payload: contribution.Custom{Title: "Web search", Data: `{"schema":{"type":"string"}}`}},
		{Kind: "hook", Key: "tool.before", Source: src, Priority: 10, Seq: 1, Payload: contribution.Custom{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Contributions =\n%+v\nwant\n%+v", got, want)
	}
}

// TestHashKinds: host kinds count in the input hash, and a host that
// declares none hashes as before they existed.
func TestHashKinds(t *testing.T) {
	base := Inputs{}
	builtin := Inputs{Spec: contribution.HostSpec{Kinds: contribution.DefaultKinds()}}
	tool := Inputs{Spec: contribution.HostSpec{Kinds: append(contribution.DefaultKinds(), contribution.KindSpec{Kind: "tool", Policy: contribution.Unique})}}
	ordered := Inputs{Spec: contribution.HostSpec{Kinds: append(contribution.DefaultKinds(), contribution.KindSpec{Kind: "tool", Policy: contribution.Ordered})}}
	h := func(in Inputs) string { return hashInputs(nil, nil, in) }
	if h(base) != h(builtin) {
		t.Error("declaring the built-in kinds changes the hash")
	}
	if h(tool) == h(base) || h(tool) == h(ordered) {
		t.Error("a host kind, or its policy, does not change the hash")
	}
}

// TestHashInputsNameOrder: members are hashed in name order whatever the
// order they are passed in (a generation's are sorted; a plan's come from
// a map), and each fingerprint stays with its name.
func TestHashInputsNameOrder(t *testing.T) {
	a, b, c := Fingerprint{Version: "1.0.0"}, Fingerprint{Version: "2.0.0"}, Fingerprint{Version: "3.0.0"}
	sorted := hashInputs([]string{"a", "b", "c"}, []Fingerprint{a, b, c}, Inputs{})
	for _, tc := range []struct {
		names []string
		fps   []Fingerprint
	}{
		{[]string{"c", "a", "b"}, []Fingerprint{c, a, b}},
		{[]string{"b", "c", "a"}, []Fingerprint{b, c, a}},
	} {
		if got := hashInputs(tc.names, tc.fps, Inputs{}); got != sorted {
			t.Errorf("hashInputs(%v) = %s, want %s (the sorted order's)", tc.names, got, sorted)
		}
	}
	if swapped := hashInputs([]string{"b", "a", "c"}, []Fingerprint{a, b, c}, Inputs{}); swapped == sorted {
		t.Error("a fingerprint moved to another name hashed the same")
	}
	if got := hashFingerprints(map[string]Fingerprint{"a": a, "b": b, "c": c}, Inputs{}); got != sorted {
		t.Errorf("hashFingerprints = %s, want %s", got, sorted)
	}
}
