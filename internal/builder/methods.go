package builder

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/protocol"
)

// checkMethods is where a manifest's provides[].methods meets the
// handshake: every method's provider ref must be a provider the plugin
// declared. A member that maps a method to an undeclared provider breaks
// a declaration rule, and the isolation rule applies (docs/architecture.md):
// an optional one is left out, a required one fails, and the failure
// cascades like any other. It reports whether the build may go on.
func (b *build) checkMethods(ctx context.Context) bool {
	found := false
	for _, name := range b.closure.Members {
		m, d := b.members[name], b.declarations(name)
		if d == nil {
			continue
		}
		reason := undeclaredMethods(m, d)
		if !b.fromManifest(name) { // declarations made from the manifest cannot differ from it
			if diffs := builtinDrift(m.Package, d); len(diffs) > 0 {
				reason = joinReasons(reason, "handshake differs from runtime.contributes: "+strings.Join(diffs, "; "))
			}
		}
		switch {
		case reason == "":
			continue
		case m.Required:
			b.markFailed(name, reason)
		default:
			b.markFailed(name, generation.LeftOut(reason))
			b.leftOut[name] = true
		}
		found = true
	}
	return !found || b.cascade(ctx)
}

// undeclaredMethods returns why m's methods break the rule, one clause per
// method whose provider d does not declare (by capability, then method),
// or "" when every one is declared.
func undeclaredMethods(m *generation.Member, d *protocol.InitializeResult) string {
	methods := m.Package.Manifest.Methods
	if len(methods) == 0 {
		return ""
	}
	declared := make(map[string]bool, len(d.Providers))
	for _, p := range d.Providers {
		declared[p.Ref] = true
	}
	var out []string
	for _, key := range slices.Sorted(maps.Keys(methods)) {
		for _, method := range slices.Sorted(maps.Keys(methods[key])) {
			if ref := methods[key][method]; !declared[ref] {
				out = append(out, fmt.Sprintf("method %q of capability %q is mapped to provider %q, which its handshake does not declare",
					method, key, ref))
			}
		}
	}
	return strings.Join(out, "; ")
}

// joinReasons joins two reasons, either of which may be empty.
func joinReasons(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
