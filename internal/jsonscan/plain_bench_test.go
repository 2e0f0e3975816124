package jsonscan

import (
	"bytes"
	"testing"
)

// BenchmarkSkipPlain measures the scan of a 64 KiB plain string, the
// data of one stream chunk (BENCHMARKS.md, streams), in MB/s.
func BenchmarkSkipPlain(b *testing.B) {
	s := append(append([]byte{'"'}, bytes.Repeat([]byte("abcdefgh"), 8<<10)...), '"')
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if end := skipPlain(s, 1); end != len(s)-1 {
			b.Fatalf("skipPlain = %d, want %d", end, len(s)-1)
		}
	}
}

// BenchmarkSkipPlainEscapes measures the scan of a 64 KiB string with an
// escape every 16 bytes: each escape ends a plain run, so the windows of
// skipPlain must stay small.
func BenchmarkSkipPlainEscapes(b *testing.B) {
	s := append(append([]byte{'"'}, bytes.Repeat([]byte(`abcdefghijklm\"n`), 4<<10)...), '"')
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if end, _ := scanString(s, 0); end != len(s) {
			b.Fatalf("scanString = %d, want %d", end, len(s))
		}
	}
}
