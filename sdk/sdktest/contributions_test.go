package sdktest

import (
	"slices"
	"testing"

	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// TestCheckContributions: the harness holds initialize's contributions to
// runtime.contributes, the priority bounds and one declaration per kind
// and key.
func TestCheckContributions(t *testing.T) {
	m, err := pluginpkg.Parse("plugin.json", []byte(`{"format": 1, "name": "tools", "version": "1.0.0",
		"runtime": {"command": "./tools", "contributes": {"tool": ["search.web"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	big := 2000
	var v verdict
	checkContributions(&v, m, []protocol.ContributionDecl{
		{Kind: "tool", Key: "search.web"}, {Kind: "tool", Key: "shell"}, {Kind: "tool", Key: "search.web", Priority: &big},
	})
	want := []string{
		`contributions[1]: tool "shell" is not listed in runtime.contributes under "tool" (§4.3)`,
		`contributions[2]: priority 2000 is outside [-1000, 1000] (§4.3)`,
		`contributions[2]: tool "search.web" was already declared at index 0 (§4.3)`,
	}
	if !slices.Equal(v.fails, want) {
		t.Errorf("fails:\n%q\nwant:\n%q", v.fails, want)
	}
}
