package builder

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/semverstr"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// Where a lazy member's published declarations come from.
const (
	// OriginManifest: the manifest's runtime.intercepts, replaces and
	// contributes.
	OriginManifest = "manifest"
	// OriginCache: the declarations its last handshake under the same
	// inputs left in the declaration cache.
	OriginCache = "cache"
	// OriginHandshake: its own handshake, at the build that started it
	// to learn them (it had neither declarations nor a cache entry).
	OriginHandshake = "handshake"
)

// manifestDeclarations returns what p's manifest declares, as the
// handshake a lazy member is published with: an interceptor per point of
// runtime.intercepts (at the manifest's priority), a claim per slot of
// runtime.replaces, a provider per ref and an action per ID of
// runtime.contributes (an action titled by its ID), and a contribution per
// host kind and key of runtime.contributes. A manifest declares only when
// it has runtime.contributes: intercepts and replaces alone are what a
// plugin may contribute, not a promise that it does. It returns nil for a
// manifest without: the member must then be started once to learn what it
// contributes.
func manifestDeclarations(p *pluginpkg.Package) *protocol.InitializeResult {
	rt := p.Manifest.Runtime
	if rt == nil || len(rt.Contributes) == 0 {
		return nil
	}
	d := &protocol.InitializeResult{Name: p.Name, Version: semverstr.String(p.Manifest.Version)}
	for _, pt := range rt.Intercepts {
		d.Interceptors = append(d.Interceptors, protocol.InterceptorDecl{Point: string(pt)})
	}
	for _, sl := range rt.Replaces {
		d.Strategies = append(d.Strategies, protocol.StrategyDecl{Slot: string(sl)})
	}
	for _, kind := range slices.Sorted(maps.Keys(rt.Contributes)) {
		for _, key := range rt.Contributes[kind] {
			switch kind {
			case contribution.KindProvider:
				d.Providers = append(d.Providers, protocol.ProviderDecl{Ref: key})
			case contribution.KindAction:
				d.Actions = append(d.Actions, protocol.ActionDecl{ID: key, Title: key})
			default:
				d.Contributions = append(d.Contributions, protocol.ContributionDecl{Kind: string(kind), Key: key})
			}
		}
	}
	return d
}

// declaresBuiltins reports whether p's manifest lists the providers or the
// actions its handshake declares (runtime.contributes): its handshake must
// then declare exactly those, eager or lazy.
func declaresBuiltins(p *pluginpkg.Package) bool {
	rt := p.Manifest.Runtime
	return rt != nil && (len(rt.Contributes[contribution.KindProvider]) > 0 || len(rt.Contributes[contribution.KindAction]) > 0)
}

// DriftError reports a handshake whose declarations differ from those a
// generation published for the member before it ran (a lazy member's), or
// from its manifest's runtime.contributes: each difference with its field
// path. The registry is never silently different: the member fails, as
// its required/optional policy says.
type DriftError struct {
	Plugin string
	// Origin is where the published declarations came from:
	// OriginManifest or OriginCache.
	Origin string
	// Differences are "field path: what differs", sorted.
	Differences []string
}

// Error returns `handshake differs from the declarations published from
// its manifest: ...`.
func (e *DriftError) Error() string {
	return fmt.Sprintf("handshake differs from the declarations published from its %s: %s", e.Origin, strings.Join(e.Differences, "; "))
}

// drift compares got, a handshake, with want, the declarations published
// (from origin), and returns the differences, nil when none. base is the
// manifest's priority, the effective priority of a declaration without
// its own. Identity is compared for every origin (interceptor points and
// their priorities, slots, provider refs, action IDs, host kinds' keys
// and priorities); a cache, which holds a whole handshake, is also
// compared on what the registry shows (descriptions, schemas, titles,
// placements, data).
func drift(want, got *protocol.InitializeResult, origin string, base int) []string {
	full := origin != OriginManifest
	var out []string
	prio := func(p *int) int {
		if p == nil {
			return base
		}
		return *p
	}
	out = append(out, diffDecls("handshake.interceptors", want.Interceptors, got.Interceptors,
		func(d protocol.InterceptorDecl) string { return d.Point },
		func(a, b protocol.InterceptorDecl) string {
			if prio(a.Priority) != prio(b.Priority) {
				return fmt.Sprintf("priority %d, published %d", prio(b.Priority), prio(a.Priority))
			}
			return ""
		})...)
	out = append(out, diffDecls("handshake.strategies", want.Strategies, got.Strategies,
		func(d protocol.StrategyDecl) string { return d.Slot }, nil)...)
	out = append(out, diffDecls("handshake.providers", want.Providers, got.Providers,
		func(d protocol.ProviderDecl) string { return d.Ref },
		func(a, b protocol.ProviderDecl) string {
			switch {
			case !full:
			case a.Description != b.Description:
				return "description differs"
			case !bytes.Equal(a.Schema, b.Schema):
				return "schema differs"
			}
			return ""
		})...)
	out = append(out, diffDecls("handshake.actions", want.Actions, got.Actions,
		func(d protocol.ActionDecl) string { return d.ID },
		func(a, b protocol.ActionDecl) string {
			if full && (a.Title != b.Title || a.Placement != b.Placement) {
				return "title or placement differs"
			}
			return ""
		})...)
	out = append(out, diffDecls("handshake.contributions", want.Contributions, got.Contributions,
		func(d protocol.ContributionDecl) string { return d.Kind + " " + d.Key },
		func(a, b protocol.ContributionDecl) string {
			switch {
			case prio(a.Priority) != prio(b.Priority):
				return fmt.Sprintf("priority %d, published %d", prio(b.Priority), prio(a.Priority))
			case full && (a.Title != b.Title || !bytes.Equal(a.Data, b.Data)):
				return "title or data differs"
			}
			return ""
		})...)
	slices.Sort(out)
	return out
}

// diffDecls compares two lists of declarations by key: one published and
// not declared, one declared and not published, and (with same, when not
// nil) one that differs. Order is not compared: the registry orders by
// priority, then by plugin, then by declaration.
func diffDecls[T any](path string, want, got []T, key func(T) string, same func(a, b T) string) []string {
	var out []string
	index := func(ds []T) map[string]T {
		m := make(map[string]T, len(ds))
		for _, d := range ds {
			m[key(d)] = d
		}
		return m
	}
	w, g := index(want), index(got)
	for k, d := range g {
		a, ok := w[k]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s[%q]: declared, but not published", path, k))
		case same != nil:
			if msg := same(a, d); msg != "" {
				out = append(out, fmt.Sprintf("%s[%q]: %s", path, k, msg))
			}
		}
	}
	for k := range w {
		if _, ok := g[k]; !ok {
			out = append(out, fmt.Sprintf("%s[%q]: published, but not declared", path, k))
		}
	}
	return out
}

// builtinDrift checks a handshake against its manifest's runtime.contributes
// providers and actions, each kind when the manifest lists it
// (declaresBuiltins): an eager member is held to them as a lazy one is.
// It returns the differences, nil when none.
func builtinDrift(p *pluginpkg.Package, got *protocol.InitializeResult) []string {
	if !declaresBuiltins(p) {
		return nil
	}
	rt := p.Manifest.Runtime
	want, only := &protocol.InitializeResult{}, &protocol.InitializeResult{}
	if refs := rt.Contributes[contribution.KindProvider]; len(refs) > 0 {
		for _, ref := range refs {
			want.Providers = append(want.Providers, protocol.ProviderDecl{Ref: ref})
		}
		only.Providers = got.Providers
	}
	if ids := rt.Contributes[contribution.KindAction]; len(ids) > 0 {
		for _, id := range ids {
			want.Actions = append(want.Actions, protocol.ActionDecl{ID: id})
		}
		only.Actions = got.Actions
	}
	return drift(want, only, OriginManifest, rt.Priority)
}
