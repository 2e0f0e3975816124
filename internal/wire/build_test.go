package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestAppendFrames holds AppendRequest and AppendResult to the bytes
// WriteMessage writes for the same message; a method holding <, > or & is
// encoded as json.Marshal encodes it (escaped), and decodes back the same.
func TestAppendFrames(t *testing.T) {
	encode := func(m *Message) string {
		var buf bytes.Buffer
		if err := NewFrameWriter(&buf).WriteMessage(m); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(buf.String(), "\n")
	}
	for _, method := range []string{MethodProviderInvoke, "", `a"b\c`, "tab\there\n", "<&>", "caf\u00e9 \u2028", "bad \xff utf8", "\x00\x1f\x7f"} {
		for _, params := range []string{"", `{"ref":"echo","input":{"a":[1,2]}}`, `"<b>"`, "null"} {
			m := &Message{JSONRPC: JSONRPCVersion, ID: json.RawMessage("42"), Method: method, Params: json.RawMessage(params)}
			got := string(AppendRequest([]byte("x"), 42, method, []byte(params)))
			written := encode(m)
			want := "x" + written
			if strings.ContainsAny(method, "<>&") {
				want = strings.Replace(want, encodeNoHTML(t, method), marshal(t, method), 1)
			}
			if got != want {
				t.Errorf("AppendRequest(%q, %q) = %s, want %s", method, params, got, want)
			}
			if method == "" {
				continue // a request without a method is not a valid message
			}
			var back, wantBack Message
			if err := DecodeMessage([]byte(got[1:]), &back); err != nil {
				t.Fatalf("AppendRequest(%q, %q): %v", method, params, err)
			}
			if err := DecodeMessage([]byte(written), &wantBack); err != nil {
				t.Fatalf("WriteMessage(%q, %q): %v", method, params, err)
			}
			if !reflect.DeepEqual(back, wantBack) {
				t.Errorf("AppendRequest(%q, %q) decodes to %+v, WriteMessage's frame to %+v", method, params, back, wantBack)
			}
		}
	}
	for _, id := range []string{"7", `"a b"`, "null", "-1.5e3", `{"a" : [1, 2]}`, "[ 1 ,\r2 ]"} {
		for _, result := range []string{"{}", `{"output":{"a":"<b>"}}`, "null"} {
			got := string(AppendResult(nil, json.RawMessage(id), []byte(result)))
			want := encode(&Message{JSONRPC: JSONRPCVersion, ID: json.RawMessage(id), Result: json.RawMessage(result)})
			if got != want {
				t.Errorf("AppendResult(%q, %q) = %s, want %s", id, result, got, want)
			}
			var m Message
			if err := DecodeMessage([]byte(got), &m); err != nil {
				t.Errorf("AppendResult(%q, %q): %v", id, result, err)
			}
		}
	}
	if got := string(AppendResult(nil, nil, []byte("1"))); got != `{"jsonrpc":"2.0","id":null,"result":1}` {
		t.Errorf("AppendResult with no id = %s", got)
	}
	for _, id := range []string{"7", `"a b"`, "", "[ 1 ,\r2 ]"} {
		for _, out := range []string{"", `{"a" : "<b>"}`, "null", " [1, 2] "} {
			got, err := AppendOutputResult([]byte("x"), json.RawMessage(id), json.RawMessage(out))
			want := AppendResult([]byte("x"), json.RawMessage(id), []byte("{}"))
			if out != "" {
				var buf bytes.Buffer
				if err := json.Compact(&buf, []byte(out)); err != nil {
					t.Fatal(err)
				}
				want = AppendResult([]byte("x"), json.RawMessage(id), []byte(`{"output":`+buf.String()+`}`))
			}
			if err != nil || string(got) != string(want) {
				t.Errorf("AppendOutputResult(%q, %q) = %s, %v; want %s", id, out, got, err, want)
			}
			if size := OutputResultSize(json.RawMessage(id), json.RawMessage(out)); len(got)-1 > size {
				t.Errorf("AppendOutputResult(%q, %q) appended %d bytes, over OutputResultSize %d", id, out, len(got)-1, size)
			}
		}
	}
	if _, err := AppendOutputResult(nil, json.RawMessage("1"), json.RawMessage("{oops")); err == nil {
		t.Error("AppendOutputResult of an output that is not JSON did not fail")
	}
}

// marshal returns json.Marshal's encoding of s.
func marshal(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// encodeNoHTML returns s encoded as WriteMessage encodes a string (no HTML
// escaping).
func encodeNoHTML(t *testing.T, s string) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// TestAppendCapabilityCall holds AppendCapabilityCall to the message
// WriteMessage writes for the same request: the frames decode to the same
// message, and, with no string needing an escape that differs between
// the two, are the same bytes.
func TestAppendCapabilityCall(t *testing.T) {
	for _, p := range []CapabilityCallParams{
		{Capability: "storage.kv", Method: "get"},
		{Capability: "storage.kv", Method: "get", Input: json.RawMessage(`{"key":"build"}`), Parent: json.RawMessage(`12`),
			Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{Capability: "a\"b\\c", Method: "tab\there\n", Input: json.RawMessage(`"x"`), Parent: json.RawMessage(`"p-1"`)},
		{Capability: "<&>", Method: "caf\u00e9 \u2028", Parent: json.RawMessage(`{ "a" : 1 }`)},
		{Capability: "s", Method: "open", Input: json.RawMessage(`[1,2]`), Stream: &StreamParams{Window: 16}},
	} {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		m := &Message{JSONRPC: JSONRPCVersion, ID: json.RawMessage(`"c7"`), Method: MethodCapabilityCall, Params: raw}
		if err := NewFrameWriter(&want).WriteMessage(m); err != nil {
			t.Fatal(err)
		}
		got := AppendCapabilityCall([]byte("x"), json.RawMessage(`"c7"`), &p)
		if !bytes.HasPrefix(got, []byte("x")) {
			t.Fatalf("AppendCapabilityCall overwrote dst: %s", got)
		}
		got = got[1:]
		var back, wantBack Message
		if err := DecodeMessage(got, &back); err != nil {
			t.Fatalf("AppendCapabilityCall(%+v) = %s: %v", p, got, err)
		}
		if err := DecodeMessage(bytes.TrimSuffix(want.Bytes(), []byte("\n")), &wantBack); err != nil {
			t.Fatal(err)
		}
		var gotParams, wantParams CapabilityCallParams
		if err := json.Unmarshal(back.Params, &gotParams); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(wantBack.Params, &wantParams); err != nil {
			t.Fatal(err)
		}
		gotParams.Parent, wantParams.Parent = compact(t, gotParams.Parent), compact(t, wantParams.Parent)
		if back.Method != wantBack.Method || string(back.ID) != string(wantBack.ID) || !reflect.DeepEqual(gotParams, wantParams) {
			t.Errorf("AppendCapabilityCall(%+v) = %s, decodes to %+v, want %+v", p, got, gotParams, wantParams)
		}
		if !strings.ContainsAny(p.Capability+p.Method, "<>&\u2028") && string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Errorf("AppendCapabilityCall(%+v) = %s, want %s", p, got, want.String())
		}
	}
}

func compact(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	if len(raw) == 0 {
		return raw
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestAppendDispatchRequest holds AppendDispatchRequest to AppendRequest
// with json.Marshal's params: the same bytes when no raw member holds
// what json.Marshal would escape or compact differently, the same message
// once decoded always, and an error exactly when json.Marshal fails.
func TestAppendDispatchRequest(t *testing.T) {
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	raws := []json.RawMessage{nil, json.RawMessage(`{"a":[1,2]}`), json.RawMessage(` { "a" : 1 } `), json.RawMessage(`"<b>&"`), json.RawMessage(`{`)}
	var params []any
	for _, raw := range raws {
		params = append(params,
			InterceptParams{Point: "tool.before", Payload: raw, Traceparent: tp},
			&StrategyInvokeParams{Slot: "context.compactor", Input: raw},
			ProviderInvokeParams{Ref: "run", Input: raw, Traceparent: tp, Stream: &StreamParams{Window: 16}},
			ProviderInvokeParams{Ref: `a"b\\c<>`, Input: raw},
			ActionRunParams{ID: "plugin/memory/forget", Context: raw},
			ContributionInvokeParams{Kind: "tool", Key: "x\u2028y", Input: raw, Traceparent: tp},
		)
	}
	for _, p := range params {
		raw, marshalErr := json.Marshal(p)
		got, ok, err := AppendDispatchRequest([]byte("x"), 7, MethodProviderInvoke, p)
		if !ok {
			t.Fatalf("%T not taken", p)
		}
		if (err != nil) != (marshalErr != nil) {
			t.Fatalf("%+v: error %v, json.Marshal's %v", p, err, marshalErr)
		}
		if err != nil {
			if string(got) != "x" {
				t.Errorf("%+v: failed but appended %q", p, got)
			}
			continue
		}
		want := string(AppendRequest([]byte("x"), 7, MethodProviderInvoke, raw))
		var gotMsg, wantMsg Message
		if err := DecodeMessage(got[1:], &gotMsg); err != nil {
			t.Fatalf("%+v: %s: %v", p, got, err)
		}
		if err := DecodeMessage([]byte(want[1:]), &wantMsg); err != nil {
			t.Fatal(err)
		}
		var g, w any
		if json.Unmarshal(gotMsg.Params, &g) != nil || json.Unmarshal(wantMsg.Params, &w) != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("%+v: params %s, json.Marshal's %s", p, gotMsg.Params, wantMsg.Params)
		}
		if s := string(raw); !strings.Contains(s, `\u003c`) && !strings.Contains(s, " ") && string(got) != want {
			t.Errorf("%+v:\n got %s\nwant %s", p, got, want)
		}
	}
	for _, p := range []any{nil, 42, (*ProviderInvokeParams)(nil), CancelParams{}} {
		if got, ok, _ := AppendDispatchRequest([]byte("x"), 1, "m", p); ok || string(got) != "x" {
			t.Errorf("AppendDispatchRequest(%#v) = %q, %v; want it left to json.Marshal", p, got, ok)
		}
	}
}
