package jsonfile

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Problem is one thing Bind found wrong at a key path such as
// "supervision.hang_timeout" or "capabilities[0].version".
type Problem struct {
	Path string
	// Msg says what is wrong, e.g. "unknown key" or "must be an integer,
	// got string (line 3, column 17)".
	Msg string
	// WrongType is set when the value at Path is of the wrong JSON type;
	// the field it was meant for is left as it was.
	WrongType bool
}

// String formats the problem as "path: msg", or msg alone at the root.
func (p Problem) String() string {
	if p.Path == "" {
		return p.Msg
	}
	return p.Path + ": " + p.Msg
}

// StringShorthand is implemented by a struct type that a JSON string may
// stand for, such as an environment variable given as "value" or as
// {"value": "...", "secret": true}: Bind calls SetString with the string.
type StringShorthand interface {
	SetString(s string)
}

// Described is implemented by a type that names what it accepts in type
// errors ("must be <description>, got number").
type Described interface {
	JSONDescription() string
}

// Bound is what Bind found wrong, by kind of problem.
type Bound struct {
	// Unknown are the keys the schema does not define, sorted by path.
	Unknown []Problem
	// Problems are, in document order, the values of the wrong JSON type
	// (with their line and column) and the strings a field's
	// encoding.TextUnmarshaler refused (with its message).
	Problems []Problem
}

// WrongType reports whether the value at path, or one holding it, is of
// the wrong JSON type, so that a check of the field there would only
// repeat the problem.
func (b Bound) WrongType(path string) bool {
	for _, p := range b.Problems {
		if p.WrongType && (path == p.Path || strings.HasPrefix(path, p.Path+".") || strings.HasPrefix(path, p.Path+"[") || p.Path == "") {
			return true
		}
	}
	return false
}

// Bind fills v, a pointer to a struct whose json tags are the schema, from
// root, decoded from data by Parse, and reports every problem at once. A
// null leaves the field as it is; of duplicate keys the last wins, as with
// encoding/json.
//
// Bind handles structs, pointers, maps with string keys, slices, strings,
// booleans, integers, floats, json.RawMessage, encoding.TextUnmarshaler
// and the interfaces above.
func Bind(root *Node, data []byte, v any) Bound {
	b := &binder{data: data, lines: NewLines(data)}
	b.value("", root, reflect.ValueOf(v).Elem())
	sort.Slice(b.Unknown, func(i, j int) bool { return b.Unknown[i].Path < b.Unknown[j].Path })
	return b.Bound
}

type binder struct {
	data  []byte
	lines *Lines
	Bound
}

var (
	rawType     = reflect.TypeFor[json.RawMessage]()
	textType    = reflect.TypeFor[encoding.TextUnmarshaler]()
	shortType   = reflect.TypeFor[StringShorthand]()
	describType = reflect.TypeFor[Described]()
)

// typeError reports that n at path is not what v accepts.
func (b *binder) typeError(path string, n *Node, v reflect.Value) {
	line, col := b.lines.Position(n.Start)
	b.Problems = append(b.Problems, Problem{Path: path, WrongType: true,
		Msg: fmt.Sprintf("must be %s, got %s (line %d, column %d)", describe(v), n.Kind, line, col)})
}

func (b *binder) value(path string, n *Node, v reflect.Value) {
	if n.Kind == KindNull {
		return
	}
	t := v.Type()
	switch {
	case t == rawType:
		v.SetBytes(append(json.RawMessage(nil), b.data[n.Start:n.End]...))
		return
	case reflect.PointerTo(t).Implements(textType):
		if n.Kind != KindString {
			b.typeError(path, n, v)
		} else if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Text)); err != nil {
			b.Problems = append(b.Problems, Problem{Path: path, Msg: err.Error()})
		}
		return
	case n.Kind == KindString && reflect.PointerTo(t).Implements(shortType):
		v.Addr().Interface().(StringShorthand).SetString(n.Text)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		b.value(path, n, v.Elem())
	case reflect.Struct:
		b.object(path, n, v)
	case reflect.Map:
		b.mapping(path, n, v)
	case reflect.Slice:
		b.slice(path, n, v)
	default:
		b.scalar(path, n, v)
	}
}

func (b *binder) object(path string, n *Node, v reflect.Value) {
	if n.Kind != KindObject {
		b.typeError(path, n, v)
		return
	}
	fields := fieldsOf(v.Type())
	for _, m := range n.Members {
		i, ok := fields[m.Key]
		if !ok {
			b.Unknown = append(b.Unknown, Problem{Path: join(path, m.Key), Msg: "unknown key"})
			continue
		}
		b.value(join(path, m.Key), m.Val, v.Field(i))
	}
}

func (b *binder) mapping(path string, n *Node, v reflect.Value) {
	if n.Kind != KindObject || v.Type().Key().Kind() != reflect.String {
		b.typeError(path, n, v)
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(v.Type(), len(n.Members)))
	}
	for _, m := range n.Members {
		e := reflect.New(v.Type().Elem()).Elem()
		b.value(join(path, m.Key), m.Val, e)
		v.SetMapIndex(reflect.ValueOf(m.Key).Convert(v.Type().Key()), e)
	}
}

func (b *binder) slice(path string, n *Node, v reflect.Value) {
	if n.Kind != KindArray {
		b.typeError(path, n, v)
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Elems), len(n.Elems))
	for i, e := range n.Elems {
		b.value(path+"["+strconv.Itoa(i)+"]", e, s.Index(i))
	}
	v.Set(s)
}

func (b *binder) scalar(path string, n *Node, v reflect.Value) {
	ok := false
	switch k := v.Kind(); {
	case k == reflect.String:
		if ok = n.Kind == KindString; ok {
			v.SetString(n.Text)
		}
	case k == reflect.Bool:
		if ok = n.Kind == KindBool; ok {
			v.SetBool(n.Bool)
		}
	case v.CanInt():
		var i int64
		if i, ok = integer(n); ok && !v.OverflowInt(i) {
			v.SetInt(i)
		} else {
			ok = false
		}
	case v.CanUint():
		var i int64
		if i, ok = integer(n); ok && i >= 0 && !v.OverflowUint(uint64(i)) {
			v.SetUint(uint64(i))
		} else {
			ok = false
		}
	case v.CanFloat():
		var f float64
		if n.Kind == KindNumber {
			f, ok = parseFloat(n.Text)
			v.SetFloat(f)
		}
	}
	if !ok {
		b.typeError(path, n, v)
	}
}

// integer returns a number node as an int64 when it is an integer in range.
func integer(n *Node) (int64, bool) {
	if n.Kind != KindNumber {
		return 0, false
	}
	if i, err := strconv.ParseInt(n.Text, 10, 64); err == nil {
		return i, true
	}
	f, ok := parseFloat(n.Text) // 1e3 and 2.0 are integers
	if !ok || f != math.Trunc(f) || math.Abs(f) >= 1<<53 {
		return 0, false
	}
	return int64(f), true
}

func parseFloat(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// describe names what v accepts, for type errors.
func describe(v reflect.Value) string {
	t := v.Type()
	if t.Implements(describType) {
		return v.Interface().(Described).JSONDescription()
	}
	if reflect.PointerTo(t).Implements(textType) {
		return "a string"
	}
	switch k := t.Kind(); {
	case k == reflect.Pointer:
		return describe(reflect.New(t.Elem()).Elem())
	case k == reflect.Struct, k == reflect.Map:
		return "an object"
	case k == reflect.Slice:
		return "an array"
	case k == reflect.String:
		return "a string"
	case k == reflect.Bool:
		return "a boolean"
	case v.CanInt():
		return "an integer"
	case v.CanUint():
		return "a non-negative integer"
	}
	return "a number"
}

// fieldsOf maps the json names of t's fields to their indexes. A field
// without a json tag, or tagged "-", is not part of the schema.
func fieldsOf(t reflect.Type) map[string]int {
	out := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" && t.Field(i).IsExported() {
			out[name] = i
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
