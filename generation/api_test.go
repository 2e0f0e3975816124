package generation

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAPINamesNoInternalPackage holds that no exported identifier of this
// package, nor its documentation, names a package of the module's internal
// tree (a host can name none of their types, and a sidecar client handed
// out would let it call plugins around the kernel's leases).
func TestAPINamesNoInternalPackage(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	internal := map[string]bool{} // local names of imported internal packages
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(p, "/internal/") {
				internal[filepath.Base(p)] = true
			}
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/extkernel/extkernel/generation")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, text string) {
		for name := range internal {
			if strings.Contains(text, name+".") {
				t.Errorf("%s names package %s:\n%s", what, name, text)
			}
		}
		if strings.Contains(text, "internal/") {
			t.Errorf("%s names the internal tree:\n%s", what, text)
		}
	}
	decl := func(n ast.Node) string {
		var b strings.Builder
		printer.Fprint(&b, fset, n)
		return b.String()
	}
	check("package doc", p.Doc)
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			check(strings.Join(v.Names, ", "), v.Doc+decl(v.Decl))
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			check(f.Name, f.Doc+decl(f.Decl))
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, typ := range p.Types {
		check(typ.Name, typ.Doc+decl(typ.Decl))
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs)
		funcs(typ.Methods)
	}
}

// TestNoProcessDeps holds that a generation is a value: nothing this
// package imports, directly or not, starts or talks to a process (go list
// -deps ./generation names no sidecar, process or builder package).
func TestNoProcessDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"/sidecar", "/internal/process", "/internal/builder", "/internal/clients"} {
			if strings.HasSuffix(dep, bad) || strings.Contains(dep, bad+"/") {
				t.Errorf("package generation depends on %s", dep)
			}
		}
	}
}
