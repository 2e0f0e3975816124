//go:build !linux

package procstat

import (
	"errors"
	"io"
	"os"
)

// readInto reads the start of the file at path into buf (as much as fits).
func readInto(path string, buf []byte) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return 0, err
	}
	return n, nil
}
