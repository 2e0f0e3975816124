//go:build !linux

package homefile

import (
	"fmt"
	"io"
)

// readFile is Read through an *os.File (Open).
func readFile(path string, limit int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	data, err := readAll(io.LimitReader(f, limit+1), int(min(fi.Size(), limit))+1)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}
