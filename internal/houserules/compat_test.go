package houserules

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCompatibilityNamesRealTests holds docs/compatibility.md to its
// claim that every promise names the test that holds it: each `TestX` it
// names is declared by a test file of the repository, and the README and
// protocol.md §8 link to it.
func TestCompatibilityNamesRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	if len(named) == 0 {
		t.Fatal("docs/compatibility.md names no test")
	}
	declared := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
			declared[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range named {
		if !declared[name] {
			t.Errorf("docs/compatibility.md names %s, which no test file declares", name)
		}
	}
	for _, f := range []string{"README.md", filepath.Join("docs", "protocol.md")} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "compatibility.md)") {
			t.Errorf("%s does not link docs/compatibility.md", f)
		}
	}
}
