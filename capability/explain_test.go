package capability

import "testing"

func TestResolveProblems(t *testing.T) {
	const cycleNote = " (the cycle does not stop startup; its members start together)"
	tests := []struct {
		name string
		req  Request
		want *Closure
	}{
		{
			name: "missing",
			req:  Request{Packages: []Package{pkg("app", "1.0.0", need("storage.kv", "^2.0"))}},
			want: &Closure{
				Members:   []string{"app"},
				DependsOn: map[string][]string{"app": nil},
				Problems: []Problem{{
					Severity: Error, Kind: Missing, Cause: Missing, Package: "app", Requirement: need("storage.kv", "^2.0"),
					Message: `package "app" requires storage.kv ^2.0: no installed package provides storage.kv`,
				}},
			},
		},
		{
			name: "version mismatch lists the host and every enabled provider",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^2.0")),
					pkg("kvstore", "1.4.0", offer("storage.kv", "1.4.0")),
					pkg("kv-legacy", "0.9.0", offer("storage.kv", "0.9.1")),
				},
				Host:  []Provided{offer("storage.kv", "1.0.0")},
				Roots: []string{"app"},
			},
			want: &Closure{
				Members:   []string{"app"},
				DependsOn: map[string][]string{"app": nil},
				Problems: []Problem{{
					Severity: Error, Kind: VersionMismatch, Cause: VersionMismatch, Package: "app", Requirement: need("storage.kv", "^2.0"),
					Message: `package "app" requires storage.kv ^2.0: no enabled package provides it; ` +
						`the host provides storage.kv 1.0.0, which does not satisfy ^2.0; ` +
						`package kv-legacy 0.9.0 provides storage.kv 0.9.1, which does not satisfy ^2.0; ` +
						`package kvstore 1.4.0 provides storage.kv 1.4.0, which does not satisfy ^2.0`,
				}},
			},
		},
		{
			name: "version mismatch names disabled providers too",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", ">=1.2, <2")),
					off(pkg("kv-old", "1.0.0", offer("storage.kv", "1.0.0"))),
				},
			},
			want: &Closure{
				Members:   []string{"app"},
				DependsOn: map[string][]string{"app": nil},
				Problems: []Problem{{
					Severity: Error, Kind: VersionMismatch, Cause: VersionMismatch, Package: "app", Requirement: need("storage.kv", ">=1.2, <2"),
					Message: `package "app" requires storage.kv >=1.2 <2: no enabled package provides it; ` +
						`package kv-old 1.0.0 (disabled) provides storage.kv 1.0.0, which does not satisfy >=1.2 <2`,
				}},
			},
		},
		{
			name: "provider disabled",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^2.0")),
					pkg("kvstore", "1.4.0", offer("storage.kv", "1.4.0")),
					off(pkg("kvstore-next", "2.1.0", offer("storage.kv", "2.1.0"))),
				},
			},
			want: &Closure{
				Members:   []string{"app", "kvstore"},
				DependsOn: map[string][]string{"app": nil, "kvstore": nil},
				Problems: []Problem{{
					Severity: Error, Kind: ProviderDisabled, Cause: ProviderDisabled, Package: "app", Requirement: need("storage.kv", "^2.0"),
					Message: `package "app" requires storage.kv ^2.0: package kvstore-next 2.1.0 provides storage.kv 2.1.0 but is disabled; ` +
						`enable it with: kernelctl enable kvstore-next; ` +
						`package kvstore 1.4.0 provides storage.kv 1.4.0, which does not satisfy ^2.0`,
				}},
			},
		},
		{
			name: "optional unsatisfied is a warning",
			req:  Request{Packages: []Package{pkg("audit", "1.0.0", want("metrics.sink", "^1.0"))}},
			want: &Closure{
				Members:   []string{"audit"},
				DependsOn: map[string][]string{"audit": nil},
				Problems: []Problem{{
					Severity: Warning, Kind: OptionalUnsatisfied, Cause: Missing, Package: "audit", Requirement: want("metrics.sink", "^1.0"),
					Message: `package "audit" optionally requires metrics.sink ^1.0: no installed package provides metrics.sink; audit runs without it`,
				}},
			},
		},
		{
			name: "optional unsatisfied keeps the disabled-provider advice",
			req: Request{Packages: []Package{
				pkg("audit", "1.0.0", want("metrics.sink", "^1.0")),
				off(pkg("prom", "1.3.0", offer("metrics.sink", "1.3.0"))),
			}},
			want: &Closure{
				Members:   []string{"audit"},
				DependsOn: map[string][]string{"audit": nil},
				Problems: []Problem{{
					Severity: Warning, Kind: OptionalUnsatisfied, Cause: ProviderDisabled, Package: "audit", Requirement: want("metrics.sink", "^1.0"),
					Message: `package "audit" optionally requires metrics.sink ^1.0: package prom 1.3.0 provides metrics.sink 1.3.0 but is disabled; ` +
						`enable it with: kernelctl enable prom; audit runs without it`,
				}},
			},
		},
		{
			name: "cycle starts at the lowest name",
			req: Request{Packages: []Package{
				pkg("c", "1.0.0", offer("cap.c", "1.0.0"), need("cap.a", "^1")),
				pkg("a", "1.0.0", offer("cap.a", "1.0.0"), need("cap.b", "^1")),
				pkg("b", "1.0.0", offer("cap.b", "1.0.0"), need("cap.c", "^1")),
			}},
			want: &Closure{
				Members: []string{"a", "b", "c"},
				Choices: []Choice{
					{Package: "a", Requirement: need("cap.b", "^1"), Provider: "b", Version: ver("1.0.0"), Candidates: 1},
					{Package: "b", Requirement: need("cap.c", "^1"), Provider: "c", Version: ver("1.0.0"), Candidates: 1},
					{Package: "c", Requirement: need("cap.a", "^1"), Provider: "a", Version: ver("1.0.0"), Candidates: 1},
				},
				DependsOn: map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}},
				Problems: []Problem{{
					Severity: Warning, Kind: Cycle, Cycle: []string{"a", "b", "c"},
					Message: "dependency cycle: a -> b -> c -> a" + cycleNote,
				}},
			},
		},
		{
			name: "self-loop and a component larger than its shortest cycle",
			req: Request{Packages: []Package{
				pkg("a", "1.0.0", offer("cap.a", "1.0.0"), need("cap.b", "^1")),
				pkg("b", "1.0.0", offer("cap.b", "1.0.0"), need("cap.a", "^1"), need("cap.c", "^1")),
				pkg("c", "1.0.0", offer("cap.c", "1.0.0"), need("cap.b", "^1")),
				pkg("self", "1.0.0", offer("cap.self", "1.0.0"), need("cap.self", "^1")),
			}},
			want: &Closure{
				Members: []string{"a", "b", "c", "self"},
				Choices: []Choice{
					{Package: "a", Requirement: need("cap.b", "^1"), Provider: "b", Version: ver("1.0.0"), Candidates: 1},
					{Package: "b", Requirement: need("cap.a", "^1"), Provider: "a", Version: ver("1.0.0"), Candidates: 1},
					{Package: "b", Requirement: need("cap.c", "^1"), Provider: "c", Version: ver("1.0.0"), Candidates: 1},
					{Package: "c", Requirement: need("cap.b", "^1"), Provider: "b", Version: ver("1.0.0"), Candidates: 1},
					{Package: "self", Requirement: need("cap.self", "^1"), Provider: "self", Version: ver("1.0.0"), Candidates: 1},
				},
				DependsOn: map[string][]string{"a": {"b"}, "b": {"a", "c"}, "c": {"b"}, "self": {"self"}},
				Problems: []Problem{
					{
						Severity: Warning, Kind: Cycle, Cycle: []string{"a", "b"},
						Message: "dependency cycle: a -> b -> a, also involving c" + cycleNote,
					},
					{
						Severity: Warning, Kind: Cycle, Cycle: []string{"self"},
						Message: "dependency cycle: self -> self" + cycleNote,
					},
				},
			},
		},
		{
			name: "unknown and disabled roots",
			req: Request{
				Packages: []Package{pkg("ok", "1.0.0"), off(pkg("x", "1.0.0"))},
				Roots:    []string{"x", "nosuch", "ok"},
			},
			want: &Closure{
				Members:   []string{"ok"},
				DependsOn: map[string][]string{"ok": nil},
				Problems: []Problem{
					{Severity: Error, Kind: UnknownRoot, Package: "nosuch", Message: `package "nosuch" was requested but is not installed`},
					{Severity: Error, Kind: RootDisabled, Package: "x", Message: `package "x" was requested but is disabled; enable it with: kernelctl enable x`},
				},
			},
		},
		{
			name: "problems sort errors first, then package, then key",
			req: Request{Packages: []Package{
				pkg("b", "1.0.0", need("z.cap", "^1"), need("a.cap", "^1")),
				pkg("a", "1.0.0", want("opt.cap", "^1"), need("m.cap", "^1")),
			}},
			want: &Closure{
				Members:   []string{"a", "b"},
				DependsOn: map[string][]string{"a": nil, "b": nil},
				Problems: []Problem{
					{Severity: Error, Kind: Missing, Cause: Missing, Package: "a", Requirement: need("m.cap", "^1"),
						Message: `package "a" requires m.cap ^1: no installed package provides m.cap`},
					{Severity: Error, Kind: Missing, Cause: Missing, Package: "b", Requirement: need("a.cap", "^1"),
						Message: `package "b" requires a.cap ^1: no installed package provides a.cap`},
					{Severity: Error, Kind: Missing, Cause: Missing, Package: "b", Requirement: need("z.cap", "^1"),
						Message: `package "b" requires z.cap ^1: no installed package provides z.cap`},
					{Severity: Warning, Kind: OptionalUnsatisfied, Cause: Missing, Package: "a", Requirement: want("opt.cap", "^1"),
						Message: `package "a" optionally requires opt.cap ^1: no installed package provides opt.cap; a runs without it`},
				},
			},
		},
	}
	runResolveTests(t, tests)
}
