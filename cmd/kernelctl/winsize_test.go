package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTerminalWidthNotATerminal reports no width for files that are not
// terminals, so the printer keeps its default.
func TestTerminalWidthNotATerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	regular, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	for _, tt := range []struct {
		name string
		f    *os.File
	}{
		{"pipe", w},
		{"regular file", regular},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if cols, ok := terminalWidth(tt.f); ok {
				t.Errorf("terminalWidth = %d, true; want ok false", cols)
			}
		})
	}
}
