package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/extkernel/extkernel/protocol"
)

// compileDefs compiles the schema file and returns a validator per $defs
// name.
func compileDefs(t *testing.T) func(def string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	// The whole file first: it must be a valid 2020-12 schema document.
	if _, err := c.Compile(schemaPath); err != nil {
		t.Fatalf("compile %s: %v", schemaPath, err)
	}
	return func(def string) *jsonschema.Schema {
		t.Helper()
		s, err := c.Compile(schemaPath + "#/$defs/" + def)
		if err != nil {
			t.Fatalf("compile $defs/%s: %v", def, err)
		}
		return s
	}
}

func mustRequest(t *testing.T, id, method string, params any) *Message {
	m := &Message{JSONRPC: JSONRPCVersion, ID: json.RawMessage(id), Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		m.Params = raw
	}
	return m
}

// TestSchemaValidatesGoValues marshals Go values and validates them against
// the schemas; hand-written invalid instances must fail.
func TestSchemaValidatesGoValues(t *testing.T) {
	def := compileDefs(t)
	five := -5
	full := protocol.InitializeResult{
		ProtocolVersion: protocol.Version, Name: "redactor", Version: "1.2.0",
		Provides:     []protocol.CapabilityDecl{{Capability: "text.redact", Version: "1.0.0"}},
		Interceptors: []protocol.InterceptorDecl{{Point: "tool.before"}, {Point: "tool.after", Priority: &five}},
		Strategies:   []protocol.StrategyDecl{{Slot: "context.compactor"}},
		Providers:    []protocol.ProviderDecl{{Ref: "count", Description: "counts", Schema: json.RawMessage(`{"type":"string"}`)}},
		Actions:      []protocol.ActionDecl{{ID: "open", Title: "Open", Placement: "toolbar"}},
		Contributions: []protocol.ContributionDecl{{Kind: "tool", Key: "search.web", Title: "Web search", Data: json.RawMessage(`{"schema":{"type":"string"}}`)},
			{Kind: "hook", Key: "tool.before", Priority: &five}},
		Features: AllFeatures.Names(),
	}
	valid := []struct {
		def   string
		value any
	}{
		{"InitializeParams", protocol.InitializeParams{ProtocolVersion: protocol.Version, Host: protocol.HostInfo{Name: "h", Version: "0.1.0"},
			Plugin: protocol.PluginInfo{Name: "p", Version: "1.0.0", DataDir: "/d"}, Config: json.RawMessage(`{"k":1}`), Session: map[string]string{"user": "ann"},
			Features: AllFeatures.Names()}},
		{"InitializeParams", protocol.InitializeParams{ProtocolVersion: "1.0.0", Plugin: protocol.PluginInfo{Name: "p", Version: "1.0.0"}}},
		{"InitializeResult", full},
		{"InitializeResult", protocol.InitializeResult{ProtocolVersion: "1.0.0", Name: "p", Version: "0.0.1"}},
		{"InterceptParams", InterceptParams{Point: "tool.before", Payload: json.RawMessage(`{"cmd":"ls"}`)}},
		{"InterceptResult", protocol.InterceptResult{Decision: protocol.DecisionContinue}},
		{"InterceptResult", protocol.InterceptResult{Decision: protocol.DecisionModify, Payload: json.RawMessage(`null`)}},
		{"InterceptResult", protocol.InterceptResult{Decision: protocol.DecisionDeny, Reason: "no"}},
		{"StrategyInvokeParams", StrategyInvokeParams{Slot: "context.compactor", Input: json.RawMessage(`[1]`)}},
		{"ProviderInvokeParams", ProviderInvokeParams{Ref: "count"}},
		{"ActionRunParams", ActionRunParams{ID: "open", Context: json.RawMessage(`{"file":"a.go"}`)}},
		{"OutputResult", OutputResult{}},
		{"OutputResult", OutputResult{Output: json.RawMessage(`"text"`)}},
		{"CancelParams", CancelParams{ID: json.RawMessage(`7`)}},
		{"CancelParams", CancelParams{ID: json.RawMessage(`"req-7"`)}},
		{"LogParams", LogParams{Level: "warn", Message: "slow", Fields: map[string]any{"ms": 900}}},
		{"NotifyParams", NotifyParams{Event: "index.ready", Data: json.RawMessage(`{"files":3}`)}},
		{"CapabilityCallParams", CapabilityCallParams{Capability: "storage.kv", Method: "get", Input: json.RawMessage(`{"key":"a"}`), Parent: json.RawMessage(`12`)}},
		{"CapabilityCallParams", CapabilityCallParams{Capability: "storage.kv", Method: "get", Parent: json.RawMessage(`"r-12"`)}},
		{"CapabilityCallParams", CapabilityCallParams{Capability: "storage.kv", Method: "put"}},
		{"ContributionInvokeParams", ContributionInvokeParams{Kind: "tool", Key: "search.web", Input: json.RawMessage(`{"q":"go"}`)}},
		{"ContributionInvokeParams", ContributionInvokeParams{Kind: "tool", Key: "search.web"}},
		{"CapabilityCallParams", CapabilityCallParams{Capability: "text.generate", Method: "run", Parent: json.RawMessage(`12`), Stream: &StreamParams{Window: 4}}},
		{"ProviderInvokeParams", ProviderInvokeParams{Ref: "count", Input: json.RawMessage(`{"n":3}`), Stream: &StreamParams{Window: DefaultStreamWindow}}},
		{"StreamChunkParams", StreamChunkParams{ID: json.RawMessage(`12`), Seq: 1, Data: json.RawMessage(`{"i":1}`)}},
		{"StreamChunkParams", StreamChunkParams{ID: json.RawMessage(`"c1"`), Seq: 7}},
		{"StreamAckParams", StreamAckParams{ID: json.RawMessage(`12`), Seq: 0}},
		{"StreamAckParams", StreamAckParams{ID: json.RawMessage(`"c1"`), Seq: 16}},
		{"ProgressParams", ProgressParams{ID: json.RawMessage(`7`)}},
		{"ProgressParams", ProgressParams{ID: json.RawMessage(`7`), Message: "indexed 3 of 4", Fraction: new(0.75)}},
		{"Empty", Empty{}},
		{"Error", &protocol.Error{Code: protocol.CodeUnknownTarget, Message: fmt.Sprintf("unknown point %q", "x")}},
		{"Message", mustRequest(t, "1", MethodPing, Empty{})},
		{"Message", NewErrorResponse(nil, &protocol.Error{Code: CodeParseError, Message: "bad"})},
		{"Message", &Message{JSONRPC: JSONRPCVersion, ID: json.RawMessage(`"a"`), Result: json.RawMessage(`{}`)}},
	}
	for i, tt := range valid {
		b, err := json.Marshal(tt.value)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("valid/%d/%s", i, tt.def), func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			if err := def(tt.def).Validate(inst); err != nil {
				t.Errorf("%s does not validate: %v", b, err)
			}
		})
	}
	invalid := []struct{ def, json string }{
		{"InitializeParams", `{"protocol_version":"1.0.0","plugin":{"name":"p","version":"1","data_dir":""}}`},
		{"InitializeParams", `{"protocol_version":"one","host":{"name":"h","version":"1"},"plugin":{"name":"p","version":"1","data_dir":""}}`},
		{"InitializeResult", `{"protocol_version":"1.0.0","name":"p","version":"1","interceptors":[{"priority":1}]}`},
		{"InterceptResult", `{"decision":"maybe"}`},
		{"InterceptResult", `{"decision":"modify"}`},
		{"LogParams", `{"level":"fatal","message":"x"}`},
		{"CancelParams", `{"id":{"n":1}}`},
		{"CapabilityCallParams", `{"capability":"storage.kv"}`},
		{"CapabilityCallParams", `{"capability":"storage.kv","method":"get","parent":null}`},
		{"Message", `{"jsonrpc":"1.0","id":1,"result":{}}`},
		{"ContributionDecl", `{"kind":"tool"}`},
		{"ContributionDecl", `{"kind":"hook","key":"tool.before","priority":1001}`},
		{"ContributionInvokeParams", `{"key":"search.web"}`},
		{"ProviderInvokeParams", `{"ref":"count","stream":{"window":0}}`},
		{"ProviderInvokeParams", `{"ref":"count","stream":{"window":1025}}`},
		{"ProviderInvokeParams", `{"ref":"count","stream":{}}`},
		{"StreamChunkParams", `{"id":12,"seq":0,"data":1}`},
		{"StreamChunkParams", `{"id":12,"seq":1}`},
		{"StreamAckParams", `{"id":12,"seq":-1}`},
		{"ProgressParams", `{"message":"no id"}`},
		{"ProgressParams", `{"id":7,"fraction":1.5}`},
		{"ProgressParams", `{"id":7,"message":3}`},
		// §4.3: a provided capability's version is strict.
		{"CapabilityDecl", `{"capability":"x","version":"2.1"}`},
		{"CapabilityDecl", `{"capability":"x","version":"v2.1"}`},
		{"CapabilityDecl", `{"capability":"x","version":"v2.1.0"}`},
		{"InitializeResult", `{"protocol_version":"1.0.0","name":"p","version":"1","provides":[{"capability":"x","version":"2.1"}]}`},
	}
	for i, tt := range invalid {
		t.Run(fmt.Sprintf("invalid/%d/%s", i, tt.def), func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if def(tt.def).Validate(inst) == nil {
				t.Errorf("%s validates, want an error", tt.json)
			}
		})
	}
}

// TestSchemaVersionPatterns holds the schema's two version patterns to the
// parsers the host uses: $defs/SemVer (provided capability versions, §4.3)
// accepts exactly what semver.StrictNewVersion accepts, and
// $defs/ProtocolVersion (protocol_version, §8) what semver.NewVersion does.
func TestSchemaVersionPatterns(t *testing.T) {
	def := compileDefs(t)
	samples := []string{
		"0.0.0", "1.0.0", "2.1.0", "10.20.30", "1.0.0-rc.1", "1.0.0-0", "1.0.0-alpha-a.b-c",
		"1.0.0+build.7", "1.0.0-rc.1+b.7", "1.0.0-x.7.z.92", "1.0.0-0a",
		"2.1", "2", "v2.1", "v2.1.0", "v1", "V1.0.0", "01.0.0", "1.01.0", "1.0.00", "1.0.0-01", "1.0.0-",
		"1.0.0+", "1.0.0+a..b", "1.0.0-a..b", "1.2.3.4", "", "one", " 1.0.0", "1.0.0 ",
	}
	tests := []struct {
		def   string
		parse func(string) (*semver.Version, error)
	}{
		{"SemVer", semver.StrictNewVersion},
		{"ProtocolVersion", semver.NewVersion},
	}
	for _, tt := range tests {
		sch := def(tt.def)
		for _, v := range samples {
			t.Run(tt.def+"/"+v, func(t *testing.T) {
				b, _ := json.Marshal(v)
				inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
				if err != nil {
					t.Fatal(err)
				}
				schemaOK := sch.Validate(inst) == nil
				_, perr := tt.parse(v)
				if schemaOK != (perr == nil) {
					t.Errorf("schema accepts %q: %v; parser error: %v", v, schemaOK, perr)
				}
			})
		}
	}
}
