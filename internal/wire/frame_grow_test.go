package wire

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestFrameReaderGrows checks that the reader returns every frame intact
// while it moves from its small read buffer to the large one, whatever
// the chunks the input arrives in, and that it keeps the small buffer while
// every frame fits it.
func TestFrameReaderGrows(t *testing.T) {
	big := strings.Repeat("x", 3*frameBufSmall)
	tests := []struct {
		name    string
		frames  []string
		wantBig bool
	}{
		{"small frames only", []string{"a", "bb", strings.Repeat("c", frameBufSmall-1)}, false},
		{"a large frame, then small ones", []string{"a", big, "b", "c", "d"}, true},
		{"large frames back to back", []string{big, big + "y", big + "z"}, true},
	}
	wraps := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"halves", iotest.HalfReader},
		{"data with EOF", iotest.DataErrReader},
	}
	for _, tt := range tests {
		for _, w := range wraps {
			t.Run(tt.name+"/"+w.name, func(t *testing.T) {
				var in bytes.Buffer
				for _, f := range tt.frames {
					fmt.Fprintln(&in, f)
				}
				fr := NewFrameReader(w.wrap(&in), 0)
				for i, want := range tt.frames {
					got, err := fr.ReadFrame()
					if err != nil {
						t.Fatalf("frame %d: %v", i, err)
					}
					if string(got) != want {
						t.Fatalf("frame %d: got %d bytes %.20q, want %d bytes %.20q", i, len(got), got, len(want), want)
					}
				}
				if _, err := fr.ReadFrame(); err != io.EOF {
					t.Fatalf("after the last frame: %v, want io.EOF", err)
				}
				if fr.big != tt.wantBig {
					t.Errorf("large buffer = %v, want %v", fr.big, tt.wantBig)
				}
			})
		}
	}
}
