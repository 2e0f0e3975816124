package homefile_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/homefile/homefiletest"
)

const testLimit = 1 << 20

func TestReadRefuses(t *testing.T) {
	for _, tt := range homefiletest.Faults(testLimit) {
		t.Run(tt.Name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			tt.Make(t, path)
			var data []byte
			var err error
			alloc := allocated(func() { data, err = homefile.Read(path, testLimit) })
			if !errors.Is(err, tt.Is) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.Says) {
				t.Errorf("Read: %v, want an error naming %s, wrapping %v, saying %q", err, path, tt.Is, tt.Says)
			}
			if data != nil {
				t.Errorf("Read returned %d bytes with its error", len(data))
			}
			// Refused before reading: far less than the limit is allocated.
			if alloc > testLimit/2 {
				t.Errorf("Read allocated %d bytes to refuse the file", alloc)
			}
		})
	}
}

func TestReadAccepts(t *testing.T) {
	tests := []struct {
		name string
		size int
		link bool
	}{
		{"empty", 0, false},
		{"small", 100, false},
		{"exactly the limit", testLimit, false},
		{"symlink to a regular file", 100, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "file")
			want := strings.Repeat("x", tt.size)
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.link {
				homefiletest.Symlink(t, path, filepath.Join(dir, "link"))
				path = filepath.Join(dir, "link")
			}
			got, err := homefile.Read(path, testLimit)
			if err != nil || string(got) != want {
				t.Errorf("Read = %d bytes, %v; want %d bytes", len(got), err, len(want))
			}
		})
	}
}

func TestReadMissingIsNotExist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.json")
	if _, err := homefile.Read(path, testLimit); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read: %v, want fs.ErrNotExist", err)
	}
}

// TestReadStopsAtLimitWhateverTheSize reads a regular file whose reported
// size (0) is smaller than its contents: the limit still holds.
func TestReadStopsAtLimitWhateverTheSize(t *testing.T) {
	const path = "/proc/self/maps" // size 0, contents far above 16 bytes
	if _, err := os.Stat(path); err != nil {
		t.Skip("no /proc")
	}
	if _, err := homefile.Read(path, 16); !errors.Is(err, homefile.ErrTooLarge) {
		t.Errorf("Read: %v, want ErrTooLarge", err)
	}
}

// TestReadGrowsPastTheReportedSize reads a regular file whose reported
// size (0) is smaller than its contents, which are under the limit: they
// are read whole.
func TestReadGrowsPastTheReportedSize(t *testing.T) {
	const path = "/proc/self/cmdline" // size 0, contents the test's arguments
	want, err := os.ReadFile(path)
	if err != nil {
		t.Skip("no /proc")
	}
	got, err := homefile.Read(path, 1<<20)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("Read = %q, %v; want %q", got, err, want)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 16 << 20: "16 MiB", 512 << 10: "512 KiB", 1000: "1000 bytes", 0: "0 bytes"} {
		if got := homefile.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// allocated returns the bytes the heap allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
