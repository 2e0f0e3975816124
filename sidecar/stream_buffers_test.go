package sidecar

import (
	"bytes"
	"testing"
)

// TestStreamBuffers drives a Stream's buffers without a plugin, as the
// reader (push) and the consumer (take, and giving back what it took, as
// Next does) would: every chunk comes out as it went in, although its
// memory is reused, and the buffers in use never outnumber the window
// and the one lent, for chunks of any sizes (growing ones included, which
// fit no buffer given back).
func TestStreamBuffers(t *testing.T) {
	for _, tt := range []struct {
		name string
		size func(seq int) int
	}{
		{"equal", func(int) int { return 100 }},
		{"growing", func(seq int) int { return seq }},
		{"varied", func(seq int) int { return []int{7, 300, 1, 64, 5000, 2}[seq%6] }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const window = 4
			s := &Stream{window: window, manual: true, ready: make(chan struct{}, 1)}
			chunk := func(seq int) []byte {
				return bytes.Repeat([]byte{byte('a' + seq%26)}, tt.size(seq))
			}
			var lent []byte
			next := 1 // the next chunk to take
			for seq := 1; seq <= 200; seq++ {
				s.mu.Lock()
				s.mu.acked = s.mu.taken // as if each chunk taken was acknowledged
				s.mu.Unlock()
				if err := s.push(int64(seq), chunk(seq), true); err != nil {
					t.Fatal(err)
				}
				for s.buffered() >= window-1 || (seq == 200 && s.buffered() > 0) {
					if lent != nil {
						s.giveBack(lent)
					}
					got, ok, fault := s.take()
					if !ok || fault != nil {
						t.Fatalf("take: %v, %v", ok, fault)
					}
					data := got.data
					if !bytes.Equal(data, chunk(next)) {
						t.Fatalf("chunk %d came out as %.20q (%d bytes)", next, data, len(data))
					}
					lent, next = data, next+1
				}
				s.mu.Lock()
				inUse := len(s.mu.free) + s.mu.buf.len() + 1
				s.mu.Unlock()
				if inUse > window+1 {
					t.Fatalf("after chunk %d: %d buffers, more than the window and the one lent", seq, inUse)
				}
			}
			if next != 201 {
				t.Fatalf("took %d chunks, want 200", next-1)
			}
		})
	}
}
