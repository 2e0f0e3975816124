package houserules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestErrorPrefixes holds the rule of the package doc: no error message
// of an internal package starts with its own name, and no error message of
// the module names the internal tree.
func TestErrorPrefixes(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", ".git", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		checkFile(t, filepath.ToSlash(rel), path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkFile checks every message of errors.New and fmt.Errorf in one file.
func checkFile(t *testing.T, rel, path string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	internal := strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/")
	own := f.Name.Name + ": "
	ast.Inspect(f, func(n ast.Node) bool {
		msg, ok := errorMessage(n)
		if !ok {
			return true
		}
		switch {
		case internal && strings.HasPrefix(msg, own):
			t.Errorf("%s: an internal package's error names the package: %q", fset.Position(n.Pos()), msg)
		case strings.Contains(msg, "internal/"):
			t.Errorf("%s: an error names the internal tree: %q", fset.Position(n.Pos()), msg)
		}
		return true
	})
}

// errorMessage returns the message literal of a call to errors.New or
// fmt.Errorf.
func errorMessage(n ast.Node) (string, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok || len(call.Args) == 0 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || !(pkg.Name == "errors" && sel.Sel.Name == "New" || pkg.Name == "fmt" && sel.Sel.Name == "Errorf") {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
