package generation_test

import (
	"fmt"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
)

// Diff classifies every package of two snapshots and compares their
// interceptor chains and slot owners.
func ExampleDiff() {
	fp := func(manifest string) generation.Fingerprint {
		return generation.Fingerprint{Version: "1.0.0", Manifest: manifest, Executable: "size:10,mtime:1"}
	}
	a := &generation.Snapshot{Format: 1, Generation: 1, Hash: "a", Packages: []generation.SnapshotPackage{
		{Name: "audit", Version: "1.0.0", Status: generation.StatusRunning, Fingerprint: fp("m1")},
		{Name: "redactor", Version: "1.0.0", Status: generation.StatusRunning, Fingerprint: fp("m2")},
	}, Contributions: []generation.SnapshotContribution{
		{Kind: contribution.KindInterceptor, Key: "tool.before", Plugin: "redactor", Priority: 100},
		{Kind: contribution.KindInterceptor, Key: "tool.before", Plugin: "audit"},
	}}
	b := &generation.Snapshot{Format: 1, Generation: 2, Hash: "b", Packages: []generation.SnapshotPackage{
		{Name: "redactor", Version: "1.0.0", Status: generation.StatusRunning, Fingerprint: fp("m3")},
		{Name: "search", Version: "0.1.0", Status: generation.StatusRunning, Fingerprint: fp("m4")},
	}, Contributions: []generation.SnapshotContribution{
		{Kind: contribution.KindInterceptor, Key: "tool.before", Plugin: "redactor", Priority: 100},
		{Kind: contribution.KindInterceptor, Key: "tool.before", Plugin: "search", Priority: 200},
	}}
	d := generation.Diff(a, b)
	for _, c := range d.Packages {
		fmt.Println(c.Name, c.Class, c.Reasons)
	}
	for _, ch := range d.Interceptors {
		fmt.Println(ch.Point, ch.Before, "->", ch.After)
	}
	// Output:
	// audit removed []
	// redactor reloaded [manifest changed]
	// search added []
	// tool.before [redactor audit] -> [search redactor]
}
