package jsonfile

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseWithDecoder is Parse as it was built over json.Decoder's Token: the
// oracle treeScanner is compared with (TestScannerMatchesDecoder,
// FuzzScannerMatchesDecoder).
func parseWithDecoder(data []byte) (*Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	r := &treeReader{dec: dec, data: data, checkUTF8: !utf8.Valid(data)}
	return r.node()
}

// treeReader reads a tree of nodes from dec, which reads data. When
// checkUTF8 is set (data is not valid UTF-8), each string literal is
// checked in data, since encoding/json replaces invalid bytes in strings
// with U+FFFD.
type treeReader struct {
	dec       *json.Decoder
	data      []byte
	checkUTF8 bool
}

// token reads the next token and returns the offset where its text starts
// and, for a string whose literal is not valid UTF-8, its raw text and the
// offset of its first invalid byte; otherwise raw is "" and bad is -1.
// Outside strings, JSON is ASCII, so any invalid byte between the previous
// token and this one is in this string.
func (r *treeReader) token() (tok json.Token, start int, raw string, bad int, err error) {
	start = int(r.dec.InputOffset())
	if tok, err = r.dec.Token(); err != nil {
		return tok, start, "", -1, err
	}
	for start < len(r.data) && strings.IndexByte(" \t\r\n,:", r.data[start]) >= 0 {
		start++
	}
	if _, ok := tok.(string); !ok || !r.checkUTF8 {
		return tok, start, "", -1, nil
	}
	end := int(r.dec.InputOffset())
	lit := r.data[start+1 : end-1] // between the quotes
	for i := 0; i < len(lit); {
		c, size := utf8.DecodeRune(lit[i:])
		if c == utf8.RuneError && size == 1 {
			return tok, start, string(lit), start + 1 + i, nil
		}
		i += size
	}
	return tok, start, "", -1, nil
}

// node reads one value.
func (r *treeReader) node() (*Node, error) {
	tok, start, _, bad, err := r.token()
	if err != nil {
		return nil, err
	}
	var n *Node
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			n, err = r.array()
		} else {
			n, err = r.object()
		}
	case string:
		n = &Node{Kind: KindString, Text: t, NotUTF8: bad}
	case json.Number:
		n = &Node{Kind: KindNumber, Text: string(t)}
	case bool:
		n = &Node{Kind: KindBool, Bool: t}
	default:
		n = &Node{Kind: KindNull}
	}
	if err != nil {
		return nil, err
	}
	n.Start, n.End = start, int(r.dec.InputOffset())
	return n, nil
}

func (r *treeReader) array() (*Node, error) {
	n := &Node{Kind: KindArray}
	for r.dec.More() {
		e, err := r.node()
		if err != nil {
			return nil, err
		}
		n.Elems = append(n.Elems, e)
	}
	_, err := r.dec.Token() // ']'
	return n, err
}

func (r *treeReader) object() (*Node, error) {
	n := &Node{Kind: KindObject}
	first := map[string]int{}
	for r.dec.More() {
		tok, _, raw, bad, err := r.token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if bad >= 0 && !strings.Contains(raw, `\`) {
			key = raw // without escapes, the raw text is the key as written
		}
		m := Member{Key: key, Offset: int(r.dec.InputOffset()), DupOf: -1, KeyNotUTF8: bad}
		if i, ok := first[key]; ok {
			m.DupOf = i
		} else {
			first[key] = len(n.Members)
		}
		if m.Val, err = r.node(); err != nil {
			return nil, err
		}
		n.Members = append(n.Members, m)
	}
	_, err := r.dec.Token() // '}'
	return n, err
}

// scannerCases are JSON texts whose trees the scanner must build as the
// decoder did: nesting, escapes, invalid UTF-8 in keys and values,
// duplicate keys, numbers of every form, white space everywhere.
var scannerCases = []string{
	`{}`, `[]`, `""`, `0`, `-1.5e+10`, `true`, `false`, `null`, ` 7 `,
	`{"a":1,"b":[true,false,null,"x"],"c":{"d":{}}}`,
	"{\n  \"format\": 1,\n  \"name\": \"p\",\n\t\"runtime\": {\"command\": \"./x\", \"args\": [\"a\", \"b\"]}\n}\n",
	`{"a":1,"a":2,"b":3,"a":4}`,
	`{"esc":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","k\u0041":"v"}`,
	`["caf\u00e9","café","日本",""]`,
	"{\"bad\xff\":\"v\xfe\",\"ok\":\"\xc3\"}",
	"[\"a\\n\xff\",\"\xe2\x82\"]",
	"{\"k\\u0041\xff\":1}",
	`[1,-0,0.5,1e3,1E-3,12345678901234567890123]`,
	`{ "a" : [ 1 , 2 ] , "b" : { } }`,
	// More members than linearKeys: duplicates found by the map, of keys
	// seen before and after it was made, with nested containers between.
	`{"k0":0,"k1":1,"k2":{"x":[1,{"y":2,"y":3}]},"k0":4,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,` +
		`"k10":10,"k11":[[],[{}]],"k12":12,"k13":13,"k1":14,"k14":14,"k15":15,"k16":16,"k2":17,"k16":18,"k17":{},"k0":19}`,
	`[[[1,2],[3]],{"a":[{"b":[]}],"c":{"a":1,"a":2}},[],{}]`,
}

// TestScannerMatchesDecoder: for each case, and each manifest and config
// under the module's testdata, the scanner's tree equals the decoder's.
func TestScannerMatchesDecoder(t *testing.T) {
	inputs := append([]string(nil), scannerCases...)
	for _, pattern := range []string{"../../testdata/*/*/plugin.json", "../../testdata/*/*/*/plugin.json", "../../testdata/*.json"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, string(data))
		}
	}
	if len(inputs) < len(scannerCases)+5 {
		t.Fatalf("found %d inputs under testdata: the globs are stale", len(inputs)-len(scannerCases))
	}
	for _, in := range inputs {
		compareScanner(t, []byte(in))
	}
}

// compareScanner checks that Parse and the decoder agree on in.
func compareScanner(t *testing.T, in []byte) {
	t.Helper()
	got, err := Parse(in, NewLines(in))
	if !json.Valid(in) || len(bytes.TrimSpace(in)) == 0 {
		if err == nil {
			t.Errorf("Parse(%q) accepted invalid JSON", in)
		}
		return
	}
	want, werr := parseWithDecoder(in)
	if err != nil || werr != nil {
		t.Fatalf("Parse(%q): %v; decoder: %v", in, err, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(%q):\n got %s\nwant %s", in, dump(got), dump(want))
	}
}

func dump(n *Node) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// FuzzScannerMatchesDecoder: on any input, Parse accepts exactly valid
// JSON and builds the decoder's tree.
func FuzzScannerMatchesDecoder(f *testing.F) {
	for _, c := range scannerCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		compareScanner(t, in)
	})
}

// BenchmarkParse parses a typical manifest with Parse and with the decoder
// it replaced, side by side.
func BenchmarkParse(b *testing.B) {
	in := []byte(scannerCases[10])
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := Parse(in, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if _, err := parseWithDecoder(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
