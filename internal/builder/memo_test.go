//go:build unix

package builder

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/pluginpkg"
)

// parsed returns a package named name parsed from its manifest text.
func parsed(t *testing.T, name, manifest string) *pluginpkg.Package {
	t.Helper()
	m, err := pluginpkg.Parse("packages/"+name+"/plugin.json", []byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	return &pluginpkg.Package{Name: name, Manifest: m}
}

// The declarations a lazy member is published from are derived once per
// parsed manifest: the same manifest gives the same values, a manifest
// parsed again (the file changed) its own, and they are what
// manifestDeclarations and generation.Contributions give.
func TestDeclaredOfMemo(t *testing.T) {
	const text = `{"format": 1, "name": "memo", "version": "1.2.0", "runtime": {"command": "./p", "activation": "lazy",
		"priority": 7, "intercepts": ["request.pre"], "contributes": {"provider": ["echo"], "action": ["open"]}}}`
	p := parsed(t, "memo", text)
	a, b := declaredOf(p), declaredOf(&pluginpkg.Package{Name: p.Name, Manifest: p.Manifest})
	if a == nil || a != b {
		t.Fatalf("declaredOf of one manifest gave %p and %p, want one value", a, b)
	}
	if want := manifestDeclarations(p); !reflect.DeepEqual(a.decl, want) {
		t.Errorf("memoized declarations %+v, want %+v", a.decl, want)
	}
	m := generation.NewMember(&generation.Inputs{}, p)
	if got, want := a.contributions(m), generation.Contributions(m, a.decl); !reflect.DeepEqual(got, want) {
		t.Errorf("memoized contributions %+v, want %+v", got, want)
	}
	again := parsed(t, "memo", text)
	if c := declaredOf(again); c == a || c == nil {
		t.Errorf("a manifest parsed again shares the old one's declarations (%p, %p)", c, a)
	}
	// A package whose name is not its manifest's is never memoized.
	other := &pluginpkg.Package{Name: "other", Manifest: p.Manifest}
	if c := declaredOf(other); c == a || c == nil || c.decl.Name != "other" {
		t.Errorf("declaredOf(package %q of manifest %q) = %+v", other.Name, p.Manifest.Name, c)
	}
	// A manifest that declares nothing has nothing, every time.
	bare := parsed(t, "bare", `{"format": 1, "name": "bare", "version": "1.0.0", "runtime": {"command": "./p"}}`)
	if c, d := declaredOf(bare), declaredOf(bare); c != nil || d != nil {
		t.Errorf("declaredOf(a manifest without contributes) = %v, %v, want nil", c, d)
	}
}

// The memo is bounded: past maxMemoManifests manifests it starts again.
func TestDeclaredOfMemoBounded(t *testing.T) {
	for i := range maxMemoManifests + 10 {
		name := fmt.Sprintf("p-%d", i)
		declaredOf(parsed(t, name, `{"format": 1, "name": "`+name+`", "version": "1.0.0",
			"runtime": {"command": "./p", "contributes": {"provider": ["echo"]}}}`))
		declMemo.Lock()
		n := len(declMemo.by)
		declMemo.Unlock()
		if n > maxMemoManifests {
			t.Fatalf("the memo holds %d manifests, more than %d", n, maxMemoManifests)
		}
	}
}
