package capability

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestResolveChoices(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want *Closure
	}{
		{
			name: "empty request",
			req:  Request{},
			want: &Closure{DependsOn: map[string][]string{}},
		},
		{
			name: "host wins over a higher package version",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^1.0")),
					pkg("kvstore", "1.9.0", offer("storage.kv", "1.9.0")),
				},
				Host:  []Provided{offer("storage.kv", "1.0.0")},
				Roots: []string{"app"},
			},
			want: &Closure{
				Members:   []string{"app"},
				Choices:   []Choice{{Package: "app", Requirement: need("storage.kv", "^1.0"), Provider: HostProvider, Version: ver("1.0.0"), Candidates: 2}},
				DependsOn: map[string][]string{"app": nil},
			},
		},
		{
			name: "package wins when the host version does not satisfy",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^2.0")),
					pkg("kvstore", "2.0.0", offer("storage.kv", "2.0.0")),
				},
				Host:  []Provided{offer("storage.kv", "1.0.0")},
				Roots: []string{"app"},
			},
			want: &Closure{
				Members:   []string{"app", "kvstore"},
				Choices:   []Choice{{Package: "app", Requirement: need("storage.kv", "^2.0"), Provider: "kvstore", Version: ver("2.0.0"), Candidates: 1}},
				DependsOn: map[string][]string{"app": {"kvstore"}, "kvstore": nil},
			},
		},
		{
			name: "highest satisfying version wins",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^1.0")),
					pkg("kv-a", "1.0.0", offer("storage.kv", "1.5.0")),
					pkg("kv-b", "1.0.0", offer("storage.kv", "1.2.0")),
					pkg("kv-c", "1.0.0", offer("storage.kv", "2.0.0")),
				},
				Roots: []string{"app"},
			},
			want: &Closure{
				Members:   []string{"app", "kv-a"},
				Choices:   []Choice{{Package: "app", Requirement: need("storage.kv", "^1.0"), Provider: "kv-a", Version: ver("1.5.0"), Candidates: 2}},
				DependsOn: map[string][]string{"app": {"kv-a"}, "kv-a": nil},
			},
		},
		{
			name: "lowest name breaks a version tie",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^1.0")),
					pkg("kv-b", "1.0.0", offer("storage.kv", "1.5.0")),
					pkg("kv-a", "3.0.0", offer("storage.kv", "1.5.0")),
				},
				Roots: []string{"app"},
			},
			want: &Closure{
				Members:   []string{"app", "kv-a"},
				Choices:   []Choice{{Package: "app", Requirement: need("storage.kv", "^1.0"), Provider: "kv-a", Version: ver("1.5.0"), Candidates: 2}},
				DependsOn: map[string][]string{"app": {"kv-a"}, "kv-a": nil},
			},
		},
		{
			name: "disabled package is never chosen",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^1.0")),
					off(pkg("kv-high", "1.0.0", offer("storage.kv", "1.9.0"))),
					pkg("kv-low", "1.0.0", offer("storage.kv", "1.1.0")),
				},
			},
			want: &Closure{
				Members:   []string{"app", "kv-low"},
				Choices:   []Choice{{Package: "app", Requirement: need("storage.kv", "^1.0"), Provider: "kv-low", Version: ver("1.1.0"), Candidates: 1}},
				DependsOn: map[string][]string{"app": {"kv-low"}, "kv-low": nil},
			},
		},
		{
			name: "satisfied optional requirement joins the closure",
			req: Request{
				Packages: []Package{
					pkg("audit", "1.0.0", want("metrics.sink", "^1.0")),
					pkg("metrics", "1.2.0", offer("metrics.sink", "1.2.0")),
				},
				Roots: []string{"audit"},
			},
			want: &Closure{
				Members:   []string{"audit", "metrics"},
				Choices:   []Choice{{Package: "audit", Requirement: want("metrics.sink", "^1.0"), Provider: "metrics", Version: ver("1.2.0"), Candidates: 1}},
				DependsOn: map[string][]string{"audit": {"metrics"}, "metrics": nil},
			},
		},
		{
			name: "transitive closure leaves unrelated packages out",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^1"), need("log.sink", "^1")),
					pkg("kvstore", "1.0.0", offer("storage.kv", "1.0.0"), need("fs.blob", "~1.2"), need("log.sink", "^1")),
					pkg("blobfs", "1.2.3", offer("fs.blob", "1.2.3")),
					pkg("unrelated", "1.0.0", offer("other.cap", "1.0.0")),
				},
				Host:  []Provided{offer("log.sink", "1.0.0")},
				Roots: []string{"app"},
			},
			want: &Closure{
				Members: []string{"app", "blobfs", "kvstore"},
				Choices: []Choice{
					{Package: "app", Requirement: need("log.sink", "^1"), Provider: HostProvider, Version: ver("1.0.0"), Candidates: 1},
					{Package: "app", Requirement: need("storage.kv", "^1"), Provider: "kvstore", Version: ver("1.0.0"), Candidates: 1},
					{Package: "kvstore", Requirement: need("fs.blob", "~1.2"), Provider: "blobfs", Version: ver("1.2.3"), Candidates: 1},
					{Package: "kvstore", Requirement: need("log.sink", "^1"), Provider: HostProvider, Version: ver("1.0.0"), Candidates: 1},
				},
				DependsOn: map[string][]string{"app": {"kvstore"}, "blobfs": nil, "kvstore": {"blobfs"}},
			},
		},
		{
			name: "roots subset with duplicate roots",
			req: Request{
				Packages: []Package{
					pkg("a", "1.0.0", need("cap.x", "^1")),
					pkg("b", "1.0.0"),
					pkg("x", "1.0.0", offer("cap.x", "1.0.0")),
				},
				Roots: []string{"b", "b"},
			},
			want: &Closure{
				Members:   []string{"b"},
				DependsOn: map[string][]string{"b": nil},
			},
		},
		{
			name: "one provider offering a key twice counts once",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", ">=1.0")),
					pkg("kv", "1.0.0", offer("storage.kv", "1.0.0"), offer("storage.kv", "2.0.0")),
				},
			},
			want: &Closure{
				Members:   []string{"app", "kv"},
				Choices:   []Choice{{Package: "app", Requirement: need("storage.kv", ">=1.0"), Provider: "kv", Version: ver("2.0.0"), Candidates: 1}},
				DependsOn: map[string][]string{"app": {"kv"}, "kv": nil},
			},
		},
		{
			name: "two requirements on one provider depend on it once",
			req: Request{
				Packages: []Package{
					pkg("app", "1.0.0", need("storage.kv", "^1"), need("storage.blob", "^1")),
					pkg("store", "1.0.0", offer("storage.kv", "1.0.0"), offer("storage.blob", "1.1.0")),
				},
			},
			want: &Closure{
				Members: []string{"app", "store"},
				Choices: []Choice{
					{Package: "app", Requirement: need("storage.blob", "^1"), Provider: "store", Version: ver("1.1.0"), Candidates: 1},
					{Package: "app", Requirement: need("storage.kv", "^1"), Provider: "store", Version: ver("1.0.0"), Candidates: 1},
				},
				DependsOn: map[string][]string{"app": {"store"}, "store": nil},
			},
		},
	}
	runResolveTests(t, tests)
}

func runResolveTests(t *testing.T, tests []struct {
	name string
	req  Request
	want *Closure
}) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.req)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Resolve mismatch\ngot:\n%s\nwant:\n%s", render(got), render(tt.want))
			}
		})
	}
}

func TestResolveInvalidRequest(t *testing.T) {
	req := Request{
		Packages: []Package{
			pkg("dup", "1.0.0"),
			pkg("dup", "2.0.0"),
			{Name: "nover", Enabled: true},
			{Name: "", Version: ver("1.0.0")},
			{Name: "badreq", Version: ver("1.0.0"), Requires: []Requirement{{Key: "Storage.KV", Constraint: con("^1")}, {Key: "ok.key"}}},
			{Name: "badprov", Version: ver("1.0.0"), Provides: []Provided{{Key: "ok.key"}}},
		},
		Host: []Provided{{Key: "host..key", Version: ver("1.0.0")}},
	}
	got, err := Resolve(req)
	if got != nil {
		t.Errorf("Resolve returned a closure with an error: %s", render(got))
	}
	if !errors.Is(err, ErrInvalidRequest) {
		t.Fatalf("Resolve error = %v, want ErrInvalidRequest", err)
	}
	const wantMsg = `invalid resolve request:
a package has an empty name
host: provides: "host..key" is not a valid capability key: segment 2 ("") is empty
package "badprov": provides ok.key with a nil version
package "badreq": requires[0]: "Storage.KV" is not a valid capability key: segment 1 ("Storage") contains an upper-case letter (identifiers are lower-case)
package "badreq": requires[1] (ok.key): constraint is nil
package "dup" is listed more than once
package "nover": version is nil`
	if err.Error() != wantMsg {
		t.Errorf("error text:\n%s\nwant:\n%s", err, wantMsg)
	}
}

func TestClosureErr(t *testing.T) {
	c, err := Resolve(Request{
		Packages: []Package{
			pkg("app", "1.0.0", need("storage.kv", "^2.0"), want("metrics.sink", "^1")),
		},
		Roots: []string{"app", "nosuch"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Has("app") || c.Has("nosuch") || c.Has("") {
		t.Errorf("Has: members %v", c.Members)
	}
	if n := len(c.Warnings()); n != 1 {
		t.Errorf("Warnings: got %d, want 1", n)
	}
	if n := len(c.Errors()); n != 2 {
		t.Errorf("Errors: got %d, want 2", n)
	}
	var re *ResolveError
	if !errors.As(c.Err(), &re) {
		t.Fatalf("Err() = %v, want a *ResolveError", c.Err())
	}
	if !reflect.DeepEqual(re.Problems, c.Errors()) {
		t.Errorf("ResolveError.Problems = %v, want %v", re.Problems, c.Errors())
	}
	const wantMsg = `package "app" requires storage.kv ^2.0: no installed package provides storage.kv
package "nosuch" was requested but is not installed`
	if c.Err().Error() != wantMsg {
		t.Errorf("Err():\n%s\nwant:\n%s", c.Err(), wantMsg)
	}

	ok, _ := Resolve(Request{Packages: []Package{pkg("solo", "1.0.0", want("metrics.sink", "^1"))}})
	if err := ok.Err(); err != nil {
		t.Errorf("warnings only: Err() = %v, want nil", err)
	}
}

func TestProblemKindString(t *testing.T) {
	want := map[ProblemKind]string{
		Missing: "missing", VersionMismatch: "version-mismatch", ProviderDisabled: "provider-disabled",
		OptionalUnsatisfied: "optional-unsatisfied", Cycle: "cycle", UnknownRoot: "unknown-root",
		RootDisabled: "root-disabled", 0: "ProblemKind(0)",
	}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("%d.String() = %q, want %q", int(k), k.String(), s)
		}
	}
	if Error.String() != "error" || Warning.String() != "warning" {
		t.Errorf("Severity strings: %q, %q", Error, Warning)
	}
}

// TestResolveConcurrentNoMutation resolves one request from several
// goroutines (run with -race) and checks that the request is left as it was.
func TestResolveConcurrentNoMutation(t *testing.T) {
	req := benchRequest(50)
	req.Roots = []string{"pkg000049", "pkg000003", "nosuch"}
	req.Packages[0], req.Packages[49] = req.Packages[49], req.Packages[0]
	roots := slices.Clone(req.Roots)
	first := req.Packages[0].Name
	want, err := Resolve(req)
	if err != nil {
		t.Fatal(err)
	}
	results := make(chan *Closure, 4)
	for range 4 {
		go func() {
			c, _ := Resolve(req)
			results <- c
		}()
	}
	for range 4 {
		if got := <-results; !reflect.DeepEqual(got, want) {
			t.Errorf("concurrent Resolve differs:\n%s\nwant:\n%s", render(got), render(want))
		}
	}
	if !slices.Equal(req.Roots, roots) || req.Packages[0].Name != first {
		t.Errorf("Resolve reordered its request: roots %v, first package %q", req.Roots, req.Packages[0].Name)
	}
}
