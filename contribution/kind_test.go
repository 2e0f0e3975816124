package contribution

import (
	"testing"
)

// hostKinds registers one extra kind per policy.
func hostKinds() HostSpec {
	spec := testHost()
	spec.Kinds = append(DefaultKinds(),
		KindSpec{Kind: "hook", Policy: Ordered, Target: TargetPoint},
		KindSpec{Kind: "theme", Policy: Exclusive, Target: TargetNone},
		KindSpec{Kind: "command", Policy: Unique, Target: TargetNone},
	)
	return spec
}

func hostKind(src Source, kind Kind, key string, priority, seq int) Contribution {
	return Contribution{Kind: kind, Key: key, Source: src, Priority: priority, Seq: seq, Payload: key + "@" + src.Plugin}
}

func TestHostKinds(t *testing.T) {
	tests := []struct {
		name    string
		in      []Contribution
		kind    Kind
		key     string
		want    []string // Get(kind, key) as names, on success
		wantErr []string
	}{
		{
			name: "ordered: priority, plugin, then declaration order (several per plugin allowed)",
			in: []Contribution{
				hostKind(hs("b"), "hook", "tool.before", 0, 2),
				hostKind(hs("b"), "hook", "tool.before", 0, 1),
				hostKind(hs("a"), "hook", "tool.before", 0, 9),
				hostKind(hs("c"), "hook", "tool.before", 3, 0),
			},
			kind: "hook", key: "tool.before",
			want: []string{"c:3:0", "a:0:9", "b:0:1", "b:0:2"},
		},
		{
			name: "ordered kind checks its points",
			in:   []Contribution{hostKind(hs("a"), "hook", "tool.nowhere", 0, 0)},
			kind: "hook", key: "tool.nowhere",
			want: []string{},
		},
		{
			name: "exclusive: sole claimant owns the key",
			in:   []Contribution{hostKind(hs("dark"), "theme", "ui.theme", 0, 0)},
			kind: "theme", key: "ui.theme",
			want: []string{"dark:0:0"},
		},
		{
			name: "exclusive: two claimants conflict (slot_owners does not apply)",
			in: []Contribution{
				hostKind(hs("dark"), "theme", "ui.theme", 0, 0),
				hostKind(hs("light"), "theme", "ui.theme", 0, 0),
			},
			wantErr: []string{`error conflict: theme "ui.theme" is claimed by both "dark" (handshake) and "light" (handshake); only one plugin may claim it; disable the others`},
		},
		{
			name: "unique: one declaration",
			in:   []Contribution{hostKind(hs("git"), "command", "git.commit", 0, 0)},
			kind: "command", key: "git.commit",
			want: []string{"git:0:0"},
		},
		{
			name: "unique: duplicate names both",
			in: []Contribution{
				hostKind(hs("git"), "command", "git.commit", 0, 0),
				hostKind(hs("vcs"), "command", "git.commit", 0, 0),
			},
			wantErr: []string{`error duplicate: command "git.commit" is declared by both "git" (handshake) and "vcs" (handshake); each command key may be declared once`},
		},
		{
			name:    "key grammar",
			in:      []Contribution{hostKind(hs("git"), "command", "Git Commit", 0, 0)},
			wantErr: []string{`error invalid: command "Git Commit" from "git" (handshake), declaration 0: key: "Git Commit" is not a valid command key: segment 1 ("Git Commit") contains an upper-case letter (identifiers are lower-case)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tryBuild(t, hostKinds(), tt.in...)
			if tt.wantErr != nil {
				equal(t, "problems", problemsOf(t, err), tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			equal(t, "Get", names(r.Get(tt.kind, tt.key)), tt.want)
			equal(t, "OfKind", names(r.OfKind(tt.kind)), tt.want)
		})
	}
}

func TestKindNotAccepted(t *testing.T) {
	spec := testHost()
	spec.Kinds = DefaultKinds()[:3] // no UI actions
	in := []Contribution{
		NewAction(hs("ui"), Action{ID: "open", Title: "Open"}, 0),
		hostKind(hs("git"), "command", "git.commit", 0, 0),
	}
	const (
		action  = `"ui" (handshake) contributes action "plugin/ui/open", a kind the host does not accept; it is ignored`
		command = `"git" (handshake) contributes command "git.commit", a kind the host does not accept; it is ignored`
	)
	r := mustBuild(t, spec, in...)
	equal(t, "Warnings", render(r.Warnings()), []string{"warning not-accepted: " + action, "warning not-accepted: " + command})
	if r.Len() != 0 || r.Actions() != nil {
		t.Errorf("Len = %d, Actions = %v; want nothing in effect", r.Len(), r.Actions())
	}
	spec.Strict = true
	_, err := tryBuild(t, spec, in...)
	equal(t, "problems", problemsOf(t, err), []string{"error not-accepted: " + action, "error not-accepted: " + command})
}

func TestHostSpecProblems(t *testing.T) {
	spec := HostSpec{
		Slots:      []Slot{"ok.slot", "Bad"},
		SlotOwners: map[Slot]string{"ok.slot": "", "other.slot": "x", "Nope": "y"},
		Kinds: []KindSpec{
			{Kind: KindInterceptor, Policy: Unique, Target: TargetPoint},
			{Kind: "hook", Policy: Ordered},
			{Kind: "hook", Policy: Unique},
			{Kind: "odd", Policy: 0},
			{Kind: "odd.target", Policy: Unique, Target: 7},
			{Kind: ""},
		},
	}
	_, err := tryBuild(t, spec)
	equal(t, "problems", problemsOf(t, err), []string{
		`error host-spec: host spec: kinds[0]: kind "interceptor" is built in with policy ordered and target point; it cannot be redeclared with policy unique and target point`,
		`error host-spec: host spec: kinds[2]: kind "hook" is declared more than once`,
		`error host-spec: host spec: kinds[3]: kind "odd": policy Policy(0) is not Ordered, Exclusive or Unique`,
		`error host-spec: host spec: kinds[4]: kind "odd.target": target Target(7) is not TargetNone, TargetPoint or TargetSlot`,
		`error host-spec: host spec: kinds[5]: kind must not be empty`,
		`error host-spec: host spec: slot_owners["Nope"]: "Nope" is not a valid slot: segment 1 ("Nope") contains an upper-case letter (identifiers are lower-case)`,
		`error host-spec: host spec: slot_owners["ok.slot"]: the owner's plugin name must not be empty`,
		`error host-spec: host spec: slots[1]: "Bad" is not a valid slot: segment 1 ("Bad") contains an upper-case letter (identifiers are lower-case)`,
		`warning unknown-target: the host config's slot_owners names "x" as owner of slot "other.slot", which the host does not declare; add it to slots or remove the entry`,
	})
}

// TestKindBuiltin holds Builtin true for the four built-in kinds, whatever
// DefaultKinds' callers do with their copy, and false for any other.
func TestKindBuiltin(t *testing.T) {
	kinds := DefaultKinds()
	kinds[0].Kind = "mutated.copy"
	tests := []struct {
		kind Kind
		want bool
	}{
		{KindInterceptor, true},
		{KindStrategy, true},
		{KindProvider, true},
		{KindAction, true},
		{"mutated.copy", false},
		{"tool.formatter", false},
		{"", false},
		{"Interceptor", false},
	}
	for _, tt := range tests {
		if got := tt.kind.Builtin(); got != tt.want {
			t.Errorf("Kind(%q).Builtin() = %v, want %v", tt.kind, got, tt.want)
		}
	}
}
