//go:build linux && !extkernel_portable

package process

import (
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestReapGroups holds what the reaper kills: the groups registered and
// not withdrawn, never group 1 or below nor its own, read to the end of
// the pipe even when the host's death is seen first. The host writes its
// registrations without waiting for the reaper to read them, so a host
// killed right after a start leaves them unread in the pipe when the
// reaper's pidfd fires; the reaper must still kill those groups.
func TestReapGroups(t *testing.T) {
	own := strconv.Itoa(syscall.Getpgrp())
	lines := "+4242\n+4343\n-4343\n+1\n+0\n+-5\n+" + own + "\nbogus\n\n+4444\n"
	want := []int{4242, 4444}
	tests := []struct {
		name       string
		parentDead bool // the host's death is signalled before reading starts
		closeWrite bool // the write end closes (EOF), as when the host alone held it
	}{
		{"EOF", false, true},
		{"host death seen first, then EOF", true, true},
		{"host death seen first, write end inherited (no EOF)", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			if _, err := w.WriteString(lines); err != nil {
				t.Fatal(err)
			}
			if tt.closeWrite {
				w.Close()
			}
			parent := make(chan struct{}, 1)
			if tt.parentDead {
				parent <- struct{}{}
			}
			got := reapGroups(r, parent, 50*time.Millisecond)
			if !slices.Equal(got, want) {
				t.Errorf("reapGroups = %v, want %v", got, want)
			}
		})
	}
}
