package confine

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// TestSniffCache: a script sniffed twice is answered from the cache the
// second time only once its version is older than the racy window, and a
// rewrite (another interpreter) is seen at once.
func TestSniffCache(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tool")
	write := func(line string) {
		if err := os.WriteFile(f, []byte(line+"\necho hi\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("#!/bin/sh")
	time.Sleep(2 * pkgfiles.RacyWindow)
	for range 2 {
		if interp, _, _, err := sniffCached(f); err != nil || interp != "/bin/sh" {
			t.Fatalf("sniffCached = %q, %v; want /bin/sh", interp, err)
		}
	}
	write("#!/usr/bin/env python3")
	interp, arg, _, err := sniffCached(f)
	if err != nil || interp != "/usr/bin/env" || arg != "python3" {
		t.Errorf("after a rewrite: %q %q, %v; want /usr/bin/env python3", interp, arg, err)
	}
}
