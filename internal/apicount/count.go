package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// count holds the exported identifiers of one package (see the command's
// doc for what each field counts).
type count struct {
	dir     string // slash-separated, relative to the module root
	top     int
	methods int
	iface   int
	fields  int
	// names lists what total counts, in declaration order: "Name" for a
	// top-level name, "Type.Method" for a method, "Type.Field" for a
	// field (an embedded one named by its type).
	names []string
}

// total is the measure of issue 12: top-level names, methods of exported
// types and exported fields of exported structs.
func (c count) total() int { return c.top + c.methods + c.fields }

func (c count) internal() bool {
	return c.dir == "internal" || strings.HasPrefix(c.dir, "internal/") || strings.Contains(c.dir, "/internal/")
}

func (c *count) add(o count) {
	c.top += o.top
	c.methods += o.methods
	c.iface += o.iface
	c.fields += o.fields
}

// countTree counts every non-main package under root, sorted by directory.
func countTree(root, goos string) ([]count, error) {
	ctx := build.Default
	ctx.GOOS = goos
	ctx.CgoEnabled = false
	var counts []count
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && skipDir(path, d.Name()) {
			return filepath.SkipDir
		}
		c, ok, err := countDir(&ctx, root, path)
		if err != nil {
			return err
		}
		if ok {
			counts = append(counts, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(counts, func(a, b count) int { return strings.Compare(a.dir, b.dir) })
	return counts, nil
}

// skipDir reports whether the walk leaves out the directory at path:
// testdata, hidden and underscore directories, and nested modules.
func skipDir(path, name string) bool {
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil
}

// countDir counts the package in dir. ok is false when dir holds no Go
// package for ctx or holds a main package.
func countDir(ctx *build.Context, root, dir string) (c count, ok bool, err error) {
	pkg, err := ctx.ImportDir(dir, 0)
	if err != nil {
		var none *build.NoGoError
		if errors.As(err, &none) {
			return c, false, nil
		}
		return c, false, fmt.Errorf("%s: %w", dir, err)
	}
	if pkg.Name == "main" {
		return c, false, nil
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return c, false, err
	}
	c.dir = filepath.ToSlash(rel)
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return c, false, err
		}
		c.addFile(f)
	}
	return c, true, nil
}

// addFile adds the exported identifiers declared in f.
func (c *count) addFile(f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			switch {
			case d.Recv == nil:
				c.addTop(d.Name)
			case d.Name.IsExported() && ast.IsExported(receiverType(d.Recv.List[0].Type)):
				c.methods++
				c.names = append(c.names, receiverType(d.Recv.List[0].Type)+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				c.addSpec(spec)
			}
		}
	}
}

func (c *count) addSpec(spec ast.Spec) {
	switch s := spec.(type) {
	case *ast.ValueSpec:
		for _, name := range s.Names {
			c.addTop(name)
		}
	case *ast.TypeSpec:
		if !s.Name.IsExported() {
			return
		}
		c.addTop(s.Name)
		if s.Assign.IsValid() { // an alias: its fields and methods are the aliased type's
			return
		}
		switch t := s.Type.(type) {
		case *ast.StructType:
			for _, f := range exportedFields(t.Fields) {
				c.fields++
				c.names = append(c.names, s.Name.Name+"."+f)
			}
		case *ast.InterfaceType:
			for _, m := range t.Methods.List { // embedded interfaces have no names
				for _, name := range m.Names {
					if name.IsExported() {
						c.iface++
					}
				}
			}
		}
	}
}

// exportedFields returns the exported names in fields; an embedded field
// is named by its type.
func exportedFields(fields *ast.FieldList) []string {
	var out []string
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			if t := receiverType(f.Type); ast.IsExported(t) {
				out = append(out, t)
			}
			continue
		}
		for _, name := range f.Names {
			if name.IsExported() {
				out = append(out, name.Name)
			}
		}
	}
	return out
}

// receiverType returns the name of the type in expr, a receiver or an
// embedded field: T, *T, T[P], pkg.T (then T).
func receiverType(expr ast.Expr) string {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.SelectorExpr:
			return e.Sel.Name
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// addTop counts name, a top-level name, when it is exported.
func (c *count) addTop(name *ast.Ident) {
	if name.IsExported() {
		c.top++
		c.names = append(c.names, name.Name)
	}
}
