package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"testing"
)

// FuzzReadMessage reads arbitrary bytes as a stream of frames, with a
// small frame limit, and checks the reader's contract: it never panics;
// every error is io.EOF or a *FrameError (after a frame over the limit the
// stream is unusable and reading stops); line numbers only grow; the line
// buffer never grows beyond the limit (the only other buffer is the
// bufio.Reader's, of fixed size); every message read has a valid JSON-RPC
// envelope and survives a write and a read unchanged.
func FuzzReadMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":"1.0.0"}}` + "\n",
		`{"jsonrpc":"2.0","method":"log","params":{"level":"warn","message":"x"}}` + "\r\n\n" + `{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}` + "\n",
		"Starting plugin v2...\n" + `{"jsonrpc":"2.0","id":1,"result":null}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}` + "\n",
		`{"jsonrpc":"2.0","params":"` + string(bytes.Repeat([]byte("x"), 300)) + `"}` + "\n",
		"[1,2]\n{}\n\n\n{\"jsonrpc\":\"1.0\"}",
	} {
		f.Add([]byte(s), uint16(64))
		f.Add([]byte(s), uint16(512))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint16) {
		maxFrame := 1 + int(limit%1024)
		fr := NewFrameReader(bytes.NewReader(data), maxFrame)
		line := 0
		for {
			m, err := fr.ReadMessage()
			if cap(fr.buf) > maxFrame+1 {
				t.Fatalf("line buffer capacity %d exceeds the limit %d + 1", cap(fr.buf), maxFrame)
			}
			if fr.line < line {
				t.Fatalf("line number went from %d to %d", line, fr.line)
			}
			line = fr.line
			if err != nil {
				if errors.Is(err, io.EOF) {
					return
				}
				var fe *FrameError
				if !errors.As(err, &fe) {
					t.Fatalf("error %T is neither io.EOF nor a *FrameError: %v", err, err)
				}
				if fe.Line != fr.line || len(fe.Quote) > 4*quoteLimit+8 {
					t.Fatalf("FrameError line %d (reader at %d), quote of %d bytes", fe.Line, fr.line, len(fe.Quote))
				}
				if errors.Is(err, ErrFrameTooLarge) {
					return
				}
				continue
			}
			checkMessage(t, m)
		}
	})
}

// checkMessage checks m's envelope and that writing and reading it back
// gives the same encoding.
func checkMessage(t *testing.T, m *Message) {
	t.Helper()
	switch {
	case m.JSONRPC != JSONRPCVersion:
		t.Fatalf("jsonrpc = %q", m.JSONRPC)
	case m.Method != "" && (m.Result != nil || m.Error != nil):
		t.Fatalf("a message with a method and a result or error: %+v", m)
	case m.Method == "" && (len(m.ID) == 0 || m.Result == nil && m.Error == nil):
		t.Fatalf("a response without an id or without a result or error: %+v", m)
	}
	var buf bytes.Buffer
	if err := NewFrameWriter(&buf).WriteMessage(m); err != nil {
		t.Fatalf("WriteMessage: %v", err)
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Fatalf("written frame is not one line: %q", buf.Bytes())
	}
	m2, err := NewFrameReader(bytes.NewReader(buf.Bytes()), 0).ReadMessage()
	if err != nil {
		t.Fatalf("written frame does not read back: %v\n%s", err, buf.Bytes())
	}
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(m2)
	if !bytes.Equal(a, b) {
		t.Fatalf("round trip changed the message:\n%s\n%s", a, b)
	}
}

// endless yields n bytes of 'x' and no newline.
type endless struct{ n int }

func (r *endless) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// TestFrameReaderMemoryIsBounded reads a 16 MiB line with a 1 KiB limit:
// the reader allocates its bufio buffer and at most one frame's worth,
// not the line.
func TestFrameReaderMemoryIsBounded(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fr := NewFrameReader(&endless{n: 16 << 20}, 1024)
	_, err := fr.ReadFrame()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(64<<10+1025+16<<10); got > bound {
		t.Errorf("allocated %d bytes reading an oversized line, want at most %d", got, bound)
	}
}
