package jsonfile

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestLinesCountRunes(t *testing.T) {
	l := NewLines([]byte("ab\n€x\n"))
	for _, tt := range []struct{ off, line, col int }{{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {6, 2, 2}, {8, 3, 1}, {99, 3, 1}} {
		if line, col := l.Position(tt.off); line != tt.line || col != tt.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tt.off, line, col, tt.line, tt.col)
		}
	}
}

func TestParse(t *testing.T) {
	data := []byte("{\"a\": [1, \"x\"], \"b\": {\"c\": null}, \"a\": true, \"k\xff\": \"v\xfe\"}")
	n, err := Parse(data, NewLines(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Members) != 4 || n.Start != 0 || n.End != len(data) {
		t.Fatalf("root = %+v", n)
	}
	arr := n.Members[0].Val
	if got := string(data[arr.Start:arr.End]); got != `[1, "x"]` || arr.Elems[1].Text != "x" || arr.Elems[0].Text != "1" {
		t.Errorf("array %q = %+v", got, arr)
	}
	if n.Members[2].DupOf != 0 || n.Members[1].DupOf != -1 || !n.Members[2].Val.Bool {
		t.Errorf("duplicates = %+v", n.Members)
	}
	bad := n.Members[3]
	if bad.Key != "k\xff" || bad.KeyNotUTF8 != 47 || bad.Val.NotUTF8 != 53 {
		t.Errorf("non-UTF-8 member = %+v (value %+v)", bad, bad.Val)
	}
	for _, tt := range []struct{ in, want string }{
		{"{\n  \"a\": é}", `invalid JSON at line 2, column 8: invalid character 'é' looking for beginning of value`},
		{`{"a": 1`, `invalid JSON at line 1, column 8: unexpected end of JSON input`},
		{`{} x`, `invalid JSON at line 1, column 4: invalid character 'x' after top-level value`},
	} {
		_, err := Parse([]byte(tt.in), NewLines([]byte(tt.in)))
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != tt.want {
			t.Errorf("Parse(%q) = %v, want %s", tt.in, err, tt.want)
		}
	}
	if _, err := Parse([]byte(" \n"), nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("Parse(empty) = %v, want ErrEmpty", err)
	}
}

func TestUnmarshal(t *testing.T) {
	type doc struct {
		A int `json:"a"`
	}
	tests := []struct {
		in     string
		strict bool
		want   string
	}{
		{`{"a": 1, "b": 2}`, false, ""},
		{`{"a": 1, "b": 2}`, true, `json: unknown field "b"`},
		{"{\"a\":\n \"1\"}", false, "line 2, column 4: json: cannot unmarshal string into Go struct field doc.a of type int"},
		{`{"a": 1} 2`, false, "line 1, column 10: invalid data after the top-level value"},
		{`{"a": `, false, "line 1, column 7: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		var d doc
		err := Unmarshal([]byte(tt.in), &d, tt.strict)
		if (err == nil && tt.want != "") || (err != nil && err.Error() != tt.want) {
			t.Errorf("Unmarshal(%s, %v) = %v, want %q", tt.in, tt.strict, err, tt.want)
		}
	}
}

type envVar struct {
	Value  string `json:"value"`
	Secret bool   `json:"secret"`
}

func (v *envVar) SetString(s string) { v.Value = s }

type schema struct {
	N     *int                       `json:"n"`
	U     uint8                      `json:"u"`
	F     float64                    `json:"f"`
	S     []string                   `json:"s"`
	M     map[string]envVar          `json:"m"`
	D     Duration                   `json:"d"`
	Raw   map[string]json.RawMessage `json:"raw"`
	Inner *struct {
		B bool `json:"b"`
	} `json:"inner"`
	hidden int
}

func TestBind(t *testing.T) {
	in := []byte(`{"n": 2, "u": 1e2, "f": 1.5, "s": ["a"], "m": {"A": "x", "B": {"value": "y", "secret": true}},
		"d": "1m30s", "raw": {"k": [1, {"z": null}]}, "inner": {"b": true}, "n": 3, "hidden": 1}`)
	root, err := Parse(in, NewLines(in))
	if err != nil {
		t.Fatal(err)
	}
	var got schema
	b := Bind(root, in, &got)
	if len(b.Problems) != 0 || len(b.Unknown) != 1 || b.Unknown[0].String() != "hidden: unknown key" {
		t.Fatalf("Bind = %+v", b)
	}
	three := 3
	want := schema{N: &three, U: 100, F: 1.5, S: []string{"a"}, M: map[string]envVar{"A": {"x", false}, "B": {"y", true}},
		D: Duration(90 * time.Second), Raw: map[string]json.RawMessage{"k": json.RawMessage(`[1, {"z": null}]`)}}
	want.Inner = &struct {
		B bool `json:"b"`
	}{true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Bind filled %+v, want %+v", got, want)
	}

	in = []byte(`{"n": 1.5, "u": 300, "s": "a", "m": {"A": 3}, "d": "soon", "inner": {"b": null, "c": 1}}`)
	root, _ = Parse(in, NewLines(in))
	b = Bind(root, in, &schema{})
	var msgs []string
	for _, p := range append(b.Unknown, b.Problems...) {
		msgs = append(msgs, p.String())
	}
	wantMsgs := []string{
		"inner.c: unknown key",
		"n: must be an integer, got number (line 1, column 7)",
		"u: must be a non-negative integer, got number (line 1, column 17)",
		"s: must be an array, got string (line 1, column 27)",
		"m.A: must be an object, got number (line 1, column 43)",
		`d: "soon" is not a positive duration such as "5s"`,
	}
	if !reflect.DeepEqual(msgs, wantMsgs) {
		t.Errorf("problems =\n%q\nwant\n%q", msgs, wantMsgs)
	}
	if !b.WrongType("m.A") || !b.WrongType("m.A.value") || b.WrongType("m.B") || b.WrongType("d") {
		t.Error("WrongType does not follow the wrong-typed paths")
	}
}

func TestDurationRoundTrip(t *testing.T) {
	for _, s := range []string{"150ms", "3s", "2m", "1m30s", "1h", "1h0m5s"} {
		var d Duration
		if err := json.Unmarshal([]byte(`"`+s+`"`), &d); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		out, _ := json.Marshal(d)
		if string(out) != `"`+s+`"` {
			t.Errorf("%s marshals back as %s", s, out)
		}
	}
	for _, s := range []string{`"0s"`, `"-1s"`, `"5"`} {
		var d Duration
		if err := json.Unmarshal([]byte(s), &d); err == nil {
			t.Errorf("%s: accepted as %v", s, d)
		}
	}
}
