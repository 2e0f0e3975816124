package main

import (
	"errors"
	"fmt"
	"go/types"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// A feature is one line of an API file: one exported name of a public
// package with its full type, in the form of Go's own api/*.txt:
//
//	pkg kernel, func New(context.Context, Options) (*Kernel, error)
//	pkg kernel, method (*Kernel) Close() error
//	pkg kernel/config, type Config struct, Home string
//
// Types of the module's own packages are named by their path relative to
// the module ("kernel/config.Config"), others by their import path.
type feature struct {
	line string
	// key is the identifier the line is about, as a CHANGELOG names it:
	// "kernel.New", "kernel.Kernel.Close", "kernel/config.Config.Home".
	key string
}

// loadEnv is the build configuration every API file describes: one
// system, so that the files do not depend on the machine that writes them.
var loadEnv = []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOWORK=off"}

// extract loads the packages (import paths relative to the module, "."
// for its root package) of the module in dir and returns their features,
// sorted, and the module's path.
func extract(dir string, pkgs []string) ([]feature, string, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule,
		Dir:  dir,
		Env:  append(os.Environ(), loadEnv...),
	}
	patterns := make([]string, len(pkgs))
	for i, p := range pkgs {
		patterns[i] = "./" + strings.TrimPrefix(p, "./")
	}
	loaded, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, "", fmt.Errorf("load %s: %w", strings.Join(pkgs, " "), err)
	}
	var errs []error
	packages.Visit(loaded, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, fmt.Errorf("package %s: %s", p.PkgPath, e.Msg))
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	var module string
	var out []feature
	for _, p := range loaded {
		if p.Module == nil {
			return nil, "", fmt.Errorf("package %s: not in a module", p.PkgPath)
		}
		module = p.Module.Path
		w := &walker{module: module, pkg: p.Types, rel: relPath(module, p.PkgPath)}
		w.walkScope()
		out = append(out, w.out...)
	}
	slices.SortFunc(out, func(a, b feature) int { return strings.Compare(a.line, b.line) })
	out = slices.CompactFunc(out, func(a, b feature) bool { return a.line == b.line })
	return out, module, nil
}

// relPath returns path relative to the module: "kernel/config", or "." for
// the module's root package; a path outside the module is returned whole.
func relPath(module, path string) string {
	if path == module {
		return "."
	}
	if rest, ok := strings.CutPrefix(path, module+"/"); ok {
		return rest
	}
	return path
}

// walker lists the features of one package.
type walker struct {
	module string
	pkg    *types.Package
	rel    string
	out    []feature
}

func (w *walker) emit(key, format string, args ...any) {
	w.out = append(w.out, feature{
		line: "pkg " + w.rel + ", " + fmt.Sprintf(format, args...),
		key:  w.rel + "." + key,
	})
}

// qualify names a package in a type: nothing for the package itself, the
// module-relative path for the module's packages, else the import path.
func (w *walker) qualify(p *types.Package) string {
	if p == w.pkg {
		return ""
	}
	return relPath(w.module, p.Path())
}

// typ formats a type as types.TypeString does, but for function types,
// at any depth, without the names of parameters and results.
func (w *walker) typ(t types.Type) string {
	switch t := t.(type) {
	case *types.Signature:
		return "func" + w.sig(t)
	case *types.Pointer:
		return "*" + w.typ(t.Elem())
	case *types.Slice:
		return "[]" + w.typ(t.Elem())
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), w.typ(t.Elem()))
	case *types.Map:
		return "map[" + w.typ(t.Key()) + "]" + w.typ(t.Elem())
	case *types.Chan:
		switch t.Dir() {
		case types.SendOnly:
			return "chan<- " + w.typ(t.Elem())
		case types.RecvOnly:
			return "<-chan " + w.typ(t.Elem())
		}
		return "chan " + w.typ(t.Elem())
	case *types.Named:
		name := t.Obj().Name()
		if p := t.Obj().Pkg(); p != nil && p != w.pkg {
			name = w.qualify(p) + "." + name
		}
		if args := t.TypeArgs(); args.Len() > 0 {
			parts := make([]string, args.Len())
			for i := range args.Len() {
				parts[i] = w.typ(args.At(i))
			}
			name += "[" + strings.Join(parts, ", ") + "]"
		}
		return name
	case *types.Struct:
		fields := make([]string, t.NumFields())
		for i := range t.NumFields() {
			f := t.Field(i)
			if f.Embedded() {
				fields[i] = w.typ(f.Type())
			} else {
				fields[i] = f.Name() + " " + w.typ(f.Type())
			}
			if tag := t.Tag(i); tag != "" {
				fields[i] += " " + strconv.Quote(tag)
			}
		}
		return "struct{" + strings.Join(fields, "; ") + "}"
	}
	return types.TypeString(t, w.qualify)
}

// sig formats a signature without its leading "func" and without the
// names of its parameters and results, which a caller does not see:
// "(context.Context, ...string) (int, error)".
func (w *walker) sig(s *types.Signature) string {
	params := w.tuple(s.Params(), s.Variadic())
	switch res := s.Results(); res.Len() {
	case 0:
		return params
	case 1:
		return params + " " + w.typ(res.At(0).Type())
	default:
		return params + " " + w.tuple(res, false)
	}
}

func (w *walker) tuple(t *types.Tuple, variadic bool) string {
	parts := make([]string, t.Len())
	for i := range t.Len() {
		typ := t.At(i).Type()
		if variadic && i == t.Len()-1 {
			parts[i] = "..." + w.typ(typ.(*types.Slice).Elem())
			continue
		}
		parts[i] = w.typ(typ)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func (w *walker) walkScope() {
	scope := w.pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			w.emit(name, "const %s %s", name, w.typ(obj.Type()))
		case *types.Var:
			w.emit(name, "var %s %s", name, w.typ(obj.Type()))
		case *types.Func:
			sig := obj.Type().(*types.Signature)
			w.emit(name, "func %s%s%s", name, w.typeParams(sig.TypeParams()), w.sig(sig))
		case *types.TypeName:
			w.walkType(obj)
		}
	}
}

func (w *walker) typeParams(tps *types.TypeParamList) string {
	if tps.Len() == 0 {
		return ""
	}
	parts := make([]string, tps.Len())
	for i := range tps.Len() {
		tp := tps.At(i)
		parts[i] = tp.Obj().Name() + " " + w.typ(tp.Constraint())
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// walkType emits a type's own line, then its exported fields or interface
// methods, then its exported methods.
func (w *walker) walkType(obj *types.TypeName) {
	name := obj.Name()
	if obj.IsAlias() {
		w.emit(name, "type %s = %s", name, w.typ(types.Unalias(obj.Type())))
		return
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		return
	}
	head := name + w.typeParams(named.TypeParams())
	switch u := named.Underlying().(type) {
	case *types.Struct:
		w.emit(name, "type %s struct", head)
		w.walkStruct(name, head, u)
	case *types.Interface:
		w.emit(name, "type %s interface { %s }", head, w.ifaceMethodNames(u))
		w.walkInterface(name, head, u)
	default:
		w.emit(name, "type %s %s", head, w.typ(u))
	}
	for i := range named.NumMethods() {
		m := named.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := head
		if tps := named.TypeParams(); tps.Len() > 0 {
			recv = name + w.typeArgNames(tps)
		}
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		w.emit(name+"."+m.Name(), "method (%s) %s%s", recv, m.Name(), w.sig(sig))
	}
}

func (w *walker) typeArgNames(tps *types.TypeParamList) string {
	names := make([]string, tps.Len())
	for i := range tps.Len() {
		names[i] = tps.At(i).Obj().Name()
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func (w *walker) walkStruct(name, head string, s *types.Struct) {
	for i := range s.NumFields() {
		f := s.Field(i)
		if !f.Exported() {
			continue
		}
		if f.Embedded() {
			w.emit(name+"."+f.Name(), "type %s struct, embedded %s", head, w.typ(f.Type()))
			continue
		}
		w.emit(name+"."+f.Name(), "type %s struct, %s %s", head, f.Name(), w.typ(f.Type()))
	}
}

// ifaceMethodNames lists an interface's method set by name, so that adding
// a method to an interface (which breaks its implementations) changes the
// type's own line; unexported methods make it unimplementable outside.
func (w *walker) ifaceMethodNames(it *types.Interface) string {
	var names []string
	unexported := false
	for i := range it.NumMethods() {
		m := it.Method(i)
		if m.Exported() {
			names = append(names, m.Name())
		} else {
			unexported = true
		}
	}
	slices.Sort(names)
	if unexported {
		names = append(names, "unexported methods")
	}
	if !it.IsMethodSet() {
		names = append(names, "type constraints")
	}
	return strings.Join(names, ", ")
}

func (w *walker) walkInterface(name, head string, it *types.Interface) {
	for i := range it.NumMethods() {
		m := it.Method(i)
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		w.emit(name+"."+m.Name(), "type %s interface, %s%s", head, m.Name(), w.sig(sig))
	}
}
