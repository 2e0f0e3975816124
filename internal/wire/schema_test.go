package wire

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/protocol"
)

// schemaPath is the machine-readable method table these tests hold to the
// Go types, so spec and code cannot drift.
const schemaPath = "../../docs/protocol.schema.json"

// goDirs are the packages whose constants the method table is held to:
// this one (Method*, the timeouts, the Code* only the machinery emits) and
// protocol (the other Code*).
var goDirs = []string{".", "../../protocol"}

// goMethod is the Go side of one method table row.
type goMethod struct {
	direction    string
	notification bool
	params       reflect.Type
	result       reflect.Type // nil for notifications
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// goMethods is every method with the Go types of its params and result.
var goMethods = map[string]goMethod{
	MethodInitialize:     {"host-to-plugin", false, typeOf[protocol.InitializeParams](), typeOf[protocol.InitializeResult]()},
	MethodIntercept:      {"host-to-plugin", false, typeOf[InterceptParams](), typeOf[protocol.InterceptResult]()},
	MethodStrategyInvoke: {"host-to-plugin", false, typeOf[StrategyInvokeParams](), typeOf[OutputResult]()},
	MethodProviderInvoke: {"host-to-plugin", false, typeOf[ProviderInvokeParams](), typeOf[OutputResult]()},
	MethodActionRun:      {"host-to-plugin", false, typeOf[ActionRunParams](), typeOf[OutputResult]()},
	MethodPing:           {"host-to-plugin", false, typeOf[Empty](), typeOf[Empty]()},
	MethodShutdown:       {"host-to-plugin", false, typeOf[Empty](), typeOf[Empty]()},
	MethodCancel:         {"both", true, typeOf[CancelParams](), nil},
	MethodLog:            {"plugin-to-host", true, typeOf[LogParams](), nil},
	MethodNotify:         {"plugin-to-host", true, typeOf[NotifyParams](), nil},
	MethodCapabilityCall: {"plugin-to-host", false, typeOf[CapabilityCallParams](), typeOf[OutputResult]()},
	MethodStreamChunk:    {"both", true, typeOf[StreamChunkParams](), nil},
	MethodStreamAck:      {"both", true, typeOf[StreamAckParams](), nil},
	MethodProgress:       {"plugin-to-host", true, typeOf[ProgressParams](), nil},
}

// goTimeouts names every default timeout as the schema's "timeouts" does.
var goTimeouts = map[string]time.Duration{
	"handshake":      DefaultHandshakeTimeout,
	"max_handshake":  MaxHandshakeTimeout,
	"call":           DefaultCallTimeout,
	"shutdown_grace": DefaultShutdownGrace,
	"kill_grace":     DefaultKillGrace,
	"write_stall":    DefaultWriteStall,

	"heartbeat_interval": DefaultHeartbeatInterval,
	"heartbeat_timeout":  DefaultHeartbeatTimeout,
	"hang":               DefaultHangTimeout,
	"max_call_duration":  DefaultMaxCallDuration,
}

type schemaDoc struct {
	ProtocolVersion string                  `json:"protocol_version"`
	Methods         map[string]schemaMethod `json:"methods"`
	ErrorCodes      map[string]int          `json:"error_codes"`
	Timeouts        map[string]string       `json:"timeouts"`
	Defs            map[string]*schemaNode  `json:"$defs"`
}

type schemaMethod struct {
	Direction string      `json:"direction"`
	Kind      string      `json:"kind"`
	Timeout   string      `json:"timeout"`
	Params    *schemaNode `json:"params"`
	Result    *schemaNode `json:"result"`
}

// schemaNode is the subset of JSON Schema the table uses.
type schemaNode struct {
	Ref                  string                 `json:"$ref"`
	Type                 any                    `json:"type"` // string or []any
	Required             []string               `json:"required"`
	Properties           map[string]*schemaNode `json:"properties"`
	Items                *schemaNode            `json:"items"`
	AdditionalProperties *schemaNode            `json:"additionalProperties"`
	Enum                 []any                  `json:"enum"`
	Const                any                    `json:"const"`
}

func loadSchema(t *testing.T) *schemaDoc {
	t.Helper()
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc schemaDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	return &doc
}

// goConsts returns the constants of the non-test files of goDirs whose
// names start with prefix, with their literal values as written (a string's
// quotes removed, a negative number's sign kept).
func goConsts(t *testing.T, prefix string) map[string]string {
	t.Helper()
	var files []string
	for _, dir := range goDirs {
		matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if strings.HasPrefix(name.Name, prefix) && i < len(vs.Values) {
					out[name.Name] = literal(vs.Values[i])
				}
			}
			return true
		})
	}
	return out
}

func literal(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil {
			return s
		}
		return e.Value
	case *ast.UnaryExpr:
		return e.Op.String() + literal(e.X)
	}
	return "?"
}

func TestSchemaMethodTable(t *testing.T) {
	doc := loadSchema(t)
	if doc.ProtocolVersion != protocol.Version {
		t.Errorf("schema protocol_version = %q, protocol.Version = %q", doc.ProtocolVersion, protocol.Version)
	}
	var consts []string
	for _, v := range goConsts(t, "Method") {
		consts = append(consts, v)
	}
	sort.Strings(consts)
	if got := slices.Sorted(maps.Keys(doc.Methods)); !slices.Equal(got, consts) {
		t.Errorf("schema methods %q, Method* constants %q", got, consts)
	}
	if got := slices.Sorted(maps.Keys(goMethods)); !slices.Equal(got, consts) {
		t.Errorf("test table methods %q, Method* constants %q", got, consts)
	}
	for _, name := range slices.Sorted(maps.Keys(goMethods)) {
		gm, sm := goMethods[name], doc.Methods[name]
		wantKind := "request"
		if gm.notification {
			wantKind = "notification"
		}
		if sm.Direction != gm.direction || sm.Kind != wantKind {
			t.Errorf("%s: schema says %s %s, want %s %s", name, sm.Direction, sm.Kind, gm.direction, wantKind)
		}
		checkRef(t, name+" params", sm.Params, gm.params)
		checkRef(t, name+" result", sm.Result, gm.result)
		if _, ok := doc.Timeouts[sm.Timeout]; !gm.notification && !ok {
			t.Errorf("%s: timeout %q is not in the schema's timeouts", name, sm.Timeout)
		}
	}
}

func checkRef(t *testing.T, what string, n *schemaNode, typ reflect.Type) {
	t.Helper()
	switch {
	case typ == nil && n != nil:
		t.Errorf("%s: schema has one, the Go table none", what)
	case typ != nil && (n == nil || n.Ref != "#/$defs/"+typ.Name()):
		t.Errorf("%s: schema %+v, want $ref #/$defs/%s", what, n, typ.Name())
	}
}

func TestSchemaErrorCodes(t *testing.T) {
	doc := loadSchema(t)
	consts := goConsts(t, "Code")
	if got, want := slices.Sorted(maps.Keys(doc.ErrorCodes)), slices.Sorted(maps.Keys(consts)); !slices.Equal(got, want) {
		t.Fatalf("schema error codes %q, Code* constants %q", got, want)
	}
	for name, v := range consts {
		if strconv.Itoa(doc.ErrorCodes[name]) != v {
			t.Errorf("%s: schema %d, Go %s", name, doc.ErrorCodes[name], v)
		}
	}
}

func TestSchemaTimeouts(t *testing.T) {
	doc := loadSchema(t)
	if got, want := slices.Sorted(maps.Keys(doc.Timeouts)), slices.Sorted(maps.Keys(goTimeouts)); !slices.Equal(got, want) {
		t.Fatalf("schema timeouts %q, Go %q", got, want)
	}
	for name, want := range goTimeouts {
		if got, err := time.ParseDuration(doc.Timeouts[name]); err != nil || got != want {
			t.Errorf("timeout %s: schema %q, Go %v", name, doc.Timeouts[name], want)
		}
	}
	// Every Duration constant is in goTimeouts: the count of Default* and
	// Max* constants minus the non-duration ones (DefaultMaxFrame, the
	// stream windows, which TestSchemaStreamWindow holds to the schema,
	// and the byte bounds DefaultQueueBytes and DefaultStreamWindowBytes).
	n := len(goConsts(t, "Default")) + len(goConsts(t, "Max")) - 5
	if n != len(goTimeouts) {
		t.Errorf("%d timeout constants, %d in goTimeouts: add the new one to both tables", n, len(goTimeouts))
	}
}

// TestSchemaStreamWindow holds the schema's bounds of a stream window to
// MaxStreamWindow, and DefaultStreamWindow within them.
func TestSchemaStreamWindow(t *testing.T) {
	b, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			StreamParams struct {
				Properties struct {
					Window struct{ Minimum, Maximum int } `json:"window"`
				} `json:"properties"`
			} `json:"StreamParams"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	w := doc.Defs.StreamParams.Properties.Window
	if w.Minimum != 1 || w.Maximum != MaxStreamWindow || DefaultStreamWindow < 1 || DefaultStreamWindow > MaxStreamWindow {
		t.Errorf("schema window in [%d, %d], MaxStreamWindow %d, DefaultStreamWindow %d", w.Minimum, w.Maximum, MaxStreamWindow, DefaultStreamWindow)
	}
}

// TestSchemaMatchesGoTypes holds every $defs entry reachable from the
// method table (and the Message envelope) to its Go struct: the same
// properties as json tags, required exactly when the tag lacks omitempty,
// and compatible types, recursively.
func TestSchemaMatchesGoTypes(t *testing.T) {
	doc := loadSchema(t)
	c := &typeChecker{t: t, defs: doc.Defs, seen: map[reflect.Type]bool{}}
	roots := []reflect.Type{typeOf[Message](), typeOf[protocol.Error]()}
	for _, name := range slices.Sorted(maps.Keys(goMethods)) {
		roots = append(roots, goMethods[name].params)
		if r := goMethods[name].result; r != nil {
			roots = append(roots, r)
		}
	}
	for _, typ := range roots {
		c.checkStruct(typ)
	}
}

type typeChecker struct {
	t    *testing.T
	defs map[string]*schemaNode
	seen map[reflect.Type]bool
}

func (c *typeChecker) checkStruct(typ reflect.Type) {
	if c.seen[typ] {
		return
	}
	c.seen[typ] = true
	def, ok := c.defs[typ.Name()]
	if !ok {
		c.t.Errorf("$defs has no %s", typ.Name())
		return
	}
	if def.Type != "object" {
		c.t.Errorf("%s: type %v, want object", typ.Name(), def.Type)
	}
	var names, required []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" || name == "" {
			c.t.Errorf("%s.%s: every field needs a json name", typ.Name(), f.Name)
			continue
		}
		names = append(names, name)
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
		prop := def.Properties[name]
		if prop == nil {
			continue // reported by the name comparison below
		}
		c.checkType(typ.Name()+"."+name, f.Type, prop)
	}
	sort.Strings(names)
	sort.Strings(required)
	if got := slices.Sorted(maps.Keys(def.Properties)); !slices.Equal(got, names) {
		c.t.Errorf("%s: schema properties %q, json tags %q", typ.Name(), got, names)
	}
	got := slices.Clone(def.Required)
	sort.Strings(got)
	if !slices.Equal(got, required) {
		c.t.Errorf("%s: schema required %q, tags without omitempty %q", typ.Name(), got, required)
	}
}

var rawMessage = typeOf[json.RawMessage]()

// checkType checks that the schema of one property accepts the JSON the Go
// type marshals to.
func (c *typeChecker) checkType(path string, typ reflect.Type, n *schemaNode) {
	if typ == rawMessage {
		return // any JSON value: every schema is a narrowing the prose documents
	}
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() == reflect.Struct {
		if n.Ref != "#/$defs/"+typ.Name() {
			c.t.Errorf("%s: schema %+v, want $ref #/$defs/%s", path, n, typ.Name())
		}
		c.checkStruct(typ)
		return
	}
	if strings.HasPrefix(n.Ref, "#/$defs/") {
		n = c.defs[strings.TrimPrefix(n.Ref, "#/$defs/")]
	}
	want := map[reflect.Kind]string{
		reflect.String: "string", reflect.Int: "integer", reflect.Int64: "integer", reflect.Float64: "number", reflect.Bool: "boolean",
		reflect.Slice: "array", reflect.Map: "object",
	}[typ.Kind()]
	switch {
	case n == nil:
		c.t.Errorf("%s: dangling $ref", path)
	case want == "":
		c.t.Errorf("%s: Go kind %s has no JSON Schema mapping in this test", path, typ.Kind())
	case n.Type == want:
	case n.Type == nil && want == "string" && allStrings(n):
	default:
		c.t.Errorf("%s: schema type %v, Go %s wants %q", path, n.Type, typ, want)
	}
	switch {
	case typ.Kind() == reflect.Slice && n != nil && n.Items != nil:
		c.checkType(path+"[]", typ.Elem(), n.Items)
	case typ.Kind() == reflect.Slice:
		c.t.Errorf("%s: array without items", path)
	case typ.Kind() == reflect.Map && typ.Elem().Kind() == reflect.String:
		if n == nil || n.AdditionalProperties == nil || n.AdditionalProperties.Type != "string" {
			c.t.Errorf("%s: map of strings needs additionalProperties {type: string}", path)
		}
	}
}

// allStrings reports whether n is an enum or const of strings only.
func allStrings(n *schemaNode) bool {
	vals := n.Enum
	if n.Const != nil {
		vals = append(vals, n.Const)
	}
	for _, v := range vals {
		if _, ok := v.(string); !ok {
			return false
		}
	}
	return len(vals) > 0
}
