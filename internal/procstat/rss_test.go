//go:build linux

package procstat

import (
	"os"
	"testing"
)

// TestRSS reads this process's resident set size: a running Go test holds
// at least a megabyte.
func TestRSS(t *testing.T) {
	n, err := RSS(os.Getpid())
	if err != nil || n < 1<<20 {
		t.Errorf("RSS = %d, %v; want at least 1 MiB", n, err)
	}
	if _, err := RSS(-1); err == nil {
		t.Error("RSS of no process did not fail")
	}
}
