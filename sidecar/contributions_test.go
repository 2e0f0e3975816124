package sidecar

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// TestCheckContributions holds each rule of initialize's contributions
// (protocol 1.1, docs/protocol.md §4.3) to its message.
func TestCheckContributions(t *testing.T) {
	pkg := func(name string, contributes map[contribution.Kind][]string) *pluginpkg.Package {
		return &pluginpkg.Package{Name: name, Manifest: &pluginpkg.Manifest{Name: name, Runtime: &pluginpkg.Runtime{Contributes: contributes}}}
	}
	hostKinds := []contribution.Kind{"tool", "hook"}
	tools := pkg("tools", map[contribution.Kind][]string{"tool": {"search.web", "fs.read"}, "hook": {"tool.before"}})
	prio := func(n int) *int { return &n }
	tests := []struct {
		name   string
		plugin *pluginpkg.Package
		kinds  []contribution.Kind
		decls  []protocol.ContributionDecl
		want   []string
	}{
		{name: "authorized", plugin: tools, kinds: hostKinds, decls: []protocol.ContributionDecl{
			{Kind: "tool", Key: "search.web", Data: json.RawMessage(`{}`)}, {Kind: "tool", Key: "fs.read"},
			{Kind: "hook", Key: "tool.before", Priority: prio(-1000)},
		}},
		{name: "none", plugin: pkg("old", nil)},
		{name: "key not listed", plugin: tools, kinds: hostKinds, decls: []protocol.ContributionDecl{{Kind: "tool", Key: "shell.run"}},
			want: []string{`contributions[0]: tool "shell.run" is not listed in runtime.contributes under "tool"`}},
		{name: "kind the host does not declare", plugin: tools, kinds: hostKinds, decls: []protocol.ContributionDecl{{Kind: "theme", Key: "dark"}},
			want: []string{`contributions[0]: kind "theme" is not one the host declares (declared: hook, tool)`}},
		{name: "host declares no kind", plugin: pkg("p", tools.Manifest.Runtime.Contributes),
			decls: []protocol.ContributionDecl{{Kind: "tool", Key: "search.web"}},
			want:  []string{`contributions[0]: kind "tool" is not one the host declares (the host declares no kind beyond the built-in ones)`}},
		{name: "built-in kind", plugin: tools, kinds: hostKinds, decls: []protocol.ContributionDecl{{Kind: "provider", Key: "x"}, {Kind: "interceptor", Key: "tool.before"}},
			want: []string{
				`contributions[0]: kind "provider" is built in: declare it in providers`,
				`contributions[1]: kind "interceptor" is built in: declare it in interceptors`,
			}},
		{name: "priority out of bounds and twice", plugin: tools, kinds: hostKinds, decls: []protocol.ContributionDecl{
			{Kind: "hook", Key: "tool.before"}, {Kind: "tool", Key: "fs.read"}, {Kind: "hook", Key: "tool.before", Priority: prio(1001)},
		}, want: []string{
			`contributions[2]: priority 1001 is outside [-1000, 1000]`,
			`contributions[2]: hook "tool.before" is declared twice (also contributions[0]); declare each kind and key once`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &protocol.InitializeResult{Name: tt.plugin.Name, Contributions: tt.decls}
			if got := checkDeclarations(tt.plugin, tt.kinds, res); !slices.Equal(got, tt.want) {
				t.Errorf("problems:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

// TestRedactContributions: a contribution's title and data keep no secret
// text once the answer is redacted, and its kind and key are redacted for
// the comparison with the manifest.
func TestRedactContributions(t *testing.T) {
	r := redactor(func(s string) string { return strings.ReplaceAll(s, "s3cr3t", "[REDACTED]") })
	res := &protocol.InitializeResult{Contributions: []protocol.ContributionDecl{
		{Kind: "tool", Key: "s3cr3t", Title: "uses s3cr3t", Data: json.RawMessage(`{"token":"s3cr3t"}`)},
	}}
	got, problems := r.declarations(res)
	b, _ := json.Marshal(got.Contributions)
	if strings.Contains(string(b), "s3cr3t") || len(problems) != 0 {
		t.Errorf("redacted contributions = %s, problems %q", b, problems)
	}
	if res.Contributions[0].Title != "uses s3cr3t" {
		t.Error("the plugin's answer itself was modified")
	}
}
