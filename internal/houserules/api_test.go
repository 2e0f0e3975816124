package houserules

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPublicAPINamesNoInternalPackage holds that no exported declaration
// of a public package (a type, a field, a function's or method's
// signature, a constant or variable) names a package of the internal
// tree: a public package is slimmed, never got under its size by moving a
// type into internal/ while its API still hands the type out.
func TestPublicAPINamesNoInternalPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := map[string][]string{} // package directory -> its non-test files
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case d.Name() == "testdata" || d.Name() == ".git" || d.Name() == "internal" || strings.HasPrefix(rel, "cmd/"):
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(rel)] = append(dirs[filepath.Dir(rel)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, files := range dirs {
		for _, path := range files {
			checkDecls(t, dir, path)
		}
	}
}

// checkDecls reports every exported declaration of one file that names an
// imported internal package.
func checkDecls(t *testing.T, dir, path string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !strings.Contains(p, "/internal/") {
			continue
		}
		name := filepath.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		internal[name] = true
	}
	if len(internal) == 0 {
		return
	}
	report := func(what string, n ast.Node) {
		var b strings.Builder
		printer.Fprint(&b, fset, n)
		ast.Inspect(n, func(x ast.Node) bool {
			if sel, ok := x.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] {
					t.Errorf("%s: %s %s names internal package %s: %s", dir, what, fset.Position(n.Pos()), id.Name, b.String())
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() && exportedRecv(d) {
				report("func "+d.Name.Name, d.Type)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					// An alias (type Severity = severity.Severity) makes
					// the internal type nameable by its public name: it
					// hands out nothing a host cannot name.
					if s.Name.IsExported() && !s.Assign.IsValid() {
						checkType(s, report)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Type != nil {
							report("value "+n.Name, s.Type)
						}
					}
				}
			}
		}
	}
}

// checkType reports an exported type's exported fields and methods, or
// its whole definition when it is not a struct or an interface.
func checkType(s *ast.TypeSpec, report func(string, ast.Node)) {
	var fields *ast.FieldList
	switch x := s.Type.(type) {
	case *ast.StructType:
		fields = x.Fields
	case *ast.InterfaceType:
		fields = x.Methods
	default:
		report("type "+s.Name.Name, s.Type)
		return
	}
	for _, fl := range fields.List {
		exported := len(fl.Names) == 0 // an embedded field is part of the API
		for _, n := range fl.Names {
			exported = exported || n.IsExported()
		}
		if exported {
			report("type "+s.Name.Name+" field", fl.Type)
		}
	}
}

// exportedRecv reports whether a function is a plain function or a method
// of an exported type.
func exportedRecv(d *ast.FuncDecl) bool {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return true
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
