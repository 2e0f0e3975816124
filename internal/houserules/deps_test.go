package houserules

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// depFloors are the lowest versions the project's modules may require of
// the dependencies issue 26 (item 13) found stale: raising a floor is
// fine, going below one is a regression.
var depFloors = map[string]string{
	"github.com/fatih/color":        "v1.19.0",
	"github.com/mattn/go-colorable": "v0.1.16",
	"github.com/mattn/go-isatty":    "v0.0.24",
	"golang.org/x/net":              "v0.63.0",
	"golang.org/x/sys":              "v0.50.0",
	"golang.org/x/term":             "v0.48.0",
	"golang.org/x/text":             "v0.44.0",
	"golang.org/x/tools":            "v0.52.0",
}

// TestDependencyFloors holds that no module of the repository (the root,
// otel/ and bench/goplugin/) requires a dependency below its floor.
func TestDependencyFloors(t *testing.T) {
	for _, mod := range []string{".", "otel", filepath.Join("bench", "goplugin")} {
		t.Run(filepath.ToSlash(mod), func(t *testing.T) {
			path := filepath.Join("..", "..", mod, "go.mod")
			reqs := readRequires(t, path)
			deps := make([]string, 0, len(depFloors))
			for dep := range depFloors {
				deps = append(deps, dep)
			}
			sort.Strings(deps)
			for _, dep := range deps {
				v, ok := reqs[dep]
				floor := depFloors[dep]
				if ok && semverLess(v, floor) {
					t.Errorf("%s: requires %s %s, below its floor %s", path, dep, v, floor)
				}
			}
		})
	}
}

// TestTerminalChecksUseXTerm holds that the root module asks "is this a
// terminal" through golang.org/x/term: no package of it imports
// github.com/mattn/go-isatty (a dependency of go-hclog's colours only).
func TestTerminalChecksUseXTerm(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			switch filepath.ToSlash(rel) {
			case ".git", "otel", "bench":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/mattn/go-isatty" {
				t.Errorf("%s imports %s: use golang.org/x/term", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readRequires returns the module versions the require directives of a
// go.mod name, in either form (one line, or a block).
func readRequires(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reqs := map[string]string{}
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "require (":
			inBlock = true
			continue
		case inBlock && line == ")":
			inBlock = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inBlock:
			continue
		}
		if fields := strings.Fields(line); len(fields) == 2 {
			reqs[fields[0]] = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return reqs
}

// semverLess reports whether version a is below b, comparing the numeric
// major, minor and patch (the pins here carry no pre-release).
func semverLess(a, b string) bool {
	pa, pb := semverParts(a), semverParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func semverParts(v string) [3]int {
	var out [3]int
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "v"), "-")
	for i, s := range strings.SplitN(v, ".", 3) {
		out[i], _ = strconv.Atoi(s)
	}
	return out
}
