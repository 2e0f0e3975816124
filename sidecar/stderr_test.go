package sidecar

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// chunkReader returns data in pieces of random sizes, some empty.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), r.rng.IntN(300))
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// emptyReader returns (0, nil) forever.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// TestLineReaderAsBufio checks that lineReader returns the lines, pieces
// and errors bufio.Reader.ReadSlice('\n') returns with a buffer of the same
// size, whatever the reads return.
func TestLineReaderAsBufio(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var inputs [][]byte
	for range 60 {
		var b []byte
		for range rng.IntN(20) {
			switch rng.IntN(4) {
			case 0:
				b = append(b, '\n')
			case 1:
				b = append(b, bytes.Repeat([]byte{'x'}, rng.IntN(3*maxStderrLine))...)
			default:
				b = fmt.Appendf(b, "line %d\r\n", rng.IntN(1000))
			}
		}
		inputs = append(inputs, b)
	}
	inputs = append(inputs, nil, []byte("no newline"), bytes.Repeat([]byte{'y'}, maxStderrLine), bytes.Repeat([]byte{'z'}, 2*maxStderrLine+1))
	readers := map[string]func([]byte) io.Reader{
		"whole":    func(b []byte) io.Reader { return bytes.NewReader(b) },
		"one byte": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"data+err": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
		"chunks":   func(b []byte) io.Reader { return &chunkReader{data: b, rng: rand.New(rand.NewPCG(uint64(len(b)), 3))} },
		"then fail": func(b []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(b), iotest.ErrReader(errors.New("boom")))
		},
		"empty reads": func(b []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(b), emptyReader{})
		},
	}
	for _, size := range []int{16, 37, 1000, maxStderrLine} {
		for name, mk := range readers {
			for i, in := range inputs {
				if size < maxStderrLine && len(in) > 4*maxStderrLine {
					continue // enough long lines at the real size
				}
				want := readSlices(func() ([]byte, error) { return nil, nil }, mk(in), size, true)
				lr := lineReader{r: mk(in), max: size}
				got := readSlices(lr.readLine, nil, size, false)
				if want != got {
					t.Fatalf("size %d, %s reads, input %d (%d bytes):\n got %s\nwant %s", size, name, i, len(in), got, want)
				}
			}
		}
	}
}

// readSlices reads lines until an error other than bufio.ErrBufferFull
// and describes them, from next or, with useBufio, from a bufio.Reader of
// size on r.
func readSlices(next func() ([]byte, error), r io.Reader, size int, useBufio bool) string {
	if useBufio {
		br := bufio.NewReaderSize(r, size)
		next = func() ([]byte, error) { return br.ReadSlice('\n') }
	}
	var out bytes.Buffer
	for range 100000 {
		line, err := next()
		fmt.Fprintf(&out, "%d:%x:%v;", len(line), line[:min(len(line), 8)], err)
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return out.String()
		}
	}
	return out.String() + "(no end)"
}

// TestLineReaderGrows checks that the buffer starts small and grows only
// for a long line, up to the maximum.
func TestLineReaderGrows(t *testing.T) {
	in := "short\n" + string(bytes.Repeat([]byte{'x'}, 3000)) + "\n" + string(bytes.Repeat([]byte{'y'}, 2*maxStderrLine))
	lr := lineReader{r: bytes.NewReader([]byte(in)), max: maxStderrLine}
	if line, err := lr.readLine(); string(line) != "short\n" || err != nil || len(lr.buf) != minLineBuf {
		t.Fatalf("first line %q, %v, buffer %d bytes; want a %d-byte buffer", line, err, len(lr.buf), minLineBuf)
	}
	if line, err := lr.readLine(); len(line) != 3001 || err != nil || len(lr.buf) != 4096 {
		t.Fatalf("second line %d bytes, %v, buffer %d bytes; want a 4096-byte buffer", len(line), err, len(lr.buf))
	}
	for range 2 {
		if line, err := lr.readLine(); len(line) != maxStderrLine || err != bufio.ErrBufferFull || len(lr.buf) != maxStderrLine {
			t.Fatalf("piece %d bytes, %v, buffer %d bytes", len(line), err, len(lr.buf))
		}
	}
	if line, err := lr.readLine(); len(line) != 0 || err != io.EOF {
		t.Fatalf("end: %d bytes, %v", len(line), err)
	}
}
