package jsonfile

import (
	"sort"
	"unicode/utf8"
)

// Lines converts byte offsets of one input into 1-based line and column
// numbers. Columns count runes, as editors do.
type Lines struct {
	data   []byte
	starts []int // offset of the first byte of each line
}

// NewLines indexes the lines of data.
func NewLines(data []byte) *Lines {
	l := &Lines{data: data, starts: []int{0}}
	for i, c := range data {
		if c == '\n' {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

// Line returns the line of the byte at offset off, in O(log lines). An
// offset outside the input is clamped to it.
func (l *Lines) Line(off int) int {
	off = max(0, min(off, len(l.data)))
	return sort.SearchInts(l.starts, off+1) // lines starting at or before off
}

// Position returns the line and column of the byte at offset off.
func (l *Lines) Position(off int) (line, col int) {
	off = max(0, min(off, len(l.data)))
	line = l.Line(off)
	return line, utf8.RuneCount(l.data[l.starts[line-1]:off]) + 1
}

// Byte returns the input byte at offset off, which must be in range.
func (l *Lines) Byte(off int) byte { return l.data[off] }
