package sidecar

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// fuzzManifest is the fixed manifest FuzzCheckDeclarations checks
// declarations against.
const fuzzManifest = `{"format": 1, "name": "fz", "version": "1.0.0",
  "runtime": {"command": "./fz", "intercepts": ["tool.before", "prompt.submit"], "replaces": ["context.compactor"],
    "contributes": {"tool": ["search.web", "fs.read"], "hook": ["tool.before"]}},
  "provides": [{"capability": "text.redact", "version": "2.1.0"}, {"capability": "test.echo", "version": "1.0.0-beta.1"}]}`

// FuzzCheckDeclarations checks arbitrary initialize results against a
// fixed manifest. It never panics, gives the same problems twice, and
// reports exactly the declarations the manifest does not authorize, by
// path: in particular an accepted result only declares points, slots,
// capability versions and contributions the manifest lists, of kinds the
// host declares.
func FuzzCheckDeclarations(f *testing.F) {
	m, err := pluginpkg.Parse("packages/fz/plugin.json", []byte(fuzzManifest))
	if err != nil {
		f.Fatal(err)
	}
	p := &pluginpkg.Package{Name: "fz", Manifest: m, ManifestPath: "packages/fz/plugin.json"}
	for _, s := range []string{
		`{"protocol_version":"1.0.0","name":"fz","version":"1.0.0"}`,
		`{"name":"fz","interceptors":[{"point":"tool.before"},{"point":"prompt.submit","priority":-1000}],"strategies":[{"slot":"context.compactor"}],"provides":[{"capability":"text.redact","version":"2.1.0"},{"capability":"test.echo","version":"1.0.0-beta.1"}]}`,
		`{"name":"other","interceptors":[{"point":"secret.point","priority":1001}],"strategies":[{"slot":"other.slot"}],"provides":[{"capability":"text.redact","version":"9.9.9"},{"capability":"not.mine","version":"1.0.0"}]}`,
		`{"name":"fz","provides":[{"capability":"text.redact","version":"2.1"},{"capability":"text.redact","version":"v2.1.0"},{"capability":"text.redact","version":"2.1.0+build.5"}]}`,
		`{"name":"fz","providers":[{"ref":"scan"}],"actions":[{"id":"a","title":"A"}]}`,
		`{"name":"fz","contributions":[{"kind":"tool","key":"search.web","data":{"x":1}},{"kind":"hook","key":"tool.before","priority":-1000}]}`,
		`{"name":"fz","contributions":[{"kind":"tool","key":"nope"},{"kind":"theme","key":"search.web"},{"kind":"interceptor","key":"tool.before"},{"kind":"tool","key":"search.web","priority":5000},{"kind":"tool","key":"search.web"},{"kind":"","key":""}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var res protocol.InitializeResult
		if json.Unmarshal(data, &res) != nil {
			return
		}
		problems := checkDeclarations(p, fuzzKinds, &res)
		if again := checkDeclarations(p, fuzzKinds, &res); !slices.Equal(problems, again) {
			t.Fatalf("problems differ between two checks:\n%q\n%q", problems, again)
		}
		var got []string
		for _, p := range problems {
			path, _, ok := strings.Cut(p, ": ")
			if !ok {
				t.Fatalf("problem without a path: %q", p)
			}
			got = append(got, path)
		}
		if want := unauthorized(m, &res); !slices.Equal(got, want) {
			t.Fatalf("problems at %q, want %q:\n%s", got, want, strings.Join(problems, "\n"))
		}
	})
}

// unauthorized is the test's own statement of what a manifest authorizes:
// it returns the path of every declaration in res that m does not, once
// per problem, in result order.
func unauthorized(m *pluginpkg.Manifest, res *protocol.InitializeResult) []string {
	var paths []string
	if res.Name != "fz" {
		paths = append(paths, "name")
	}
	for i, d := range res.Interceptors {
		path := fmt.Sprintf("interceptors[%d]", i)
		if !slices.ContainsFunc(m.Runtime.Intercepts, func(p contribution.Point) bool { return string(p) == d.Point }) {
			paths = append(paths, path)
		}
		if d.Priority != nil && (*d.Priority < -1000 || *d.Priority > 1000) {
			paths = append(paths, path)
		}
	}
	for i, d := range res.Strategies {
		if !slices.ContainsFunc(m.Runtime.Replaces, func(s contribution.Slot) bool { return string(s) == d.Slot }) {
			paths = append(paths, fmt.Sprintf("strategies[%d]", i))
		}
	}
	for i, d := range res.Provides {
		v, err := semver.StrictNewVersion(d.Version)
		ok := slices.ContainsFunc(m.Provides, func(p capability.Provided) bool {
			return string(p.Key) == d.Capability && err == nil && p.Version.Equal(v)
		})
		if !ok {
			paths = append(paths, fmt.Sprintf("provides[%d]", i))
		}
	}
	seen := map[[2]string]bool{}
	for i, d := range res.Contributions {
		path := fmt.Sprintf("contributions[%d]", i)
		if !slices.Contains(fuzzKinds, contribution.Kind(d.Kind)) || !slices.Contains(m.Runtime.Contributes[contribution.Kind(d.Kind)], d.Key) {
			paths = append(paths, path)
		}
		if d.Priority != nil && (*d.Priority < -1000 || *d.Priority > 1000) {
			paths = append(paths, path)
		}
		if seen[[2]string{d.Kind, d.Key}] {
			paths = append(paths, path)
		}
		seen[[2]string{d.Kind, d.Key}] = true
	}
	return paths
}

// fuzzKinds are the kinds the fuzz host declares beyond the built-in ones:
// "theme" is one the fixed manifest does not list.
var fuzzKinds = []contribution.Kind{"hook", "theme", "tool"}
