package sidecar

import (
	"errors"
	"strings"
	"testing"
)

// TestOutQueueUrgentFirst checks that pings and cancels jump the queue of
// ordinary calls, and that a queued request can be withdrawn unsent.
func TestOutQueueUrgentFirst(t *testing.T) {
	q := newOutQueue()
	for i, f := range []string{"call1", "call2", "call3"} {
		if err := q.push(false, int64(i+1), []byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.push(true, 0, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if !q.remove(2) || q.remove(2) {
		t.Error("remove(2) should succeed once")
	}
	var got []string
	for {
		f, ok, closed := q.pop()
		if !ok || closed {
			break
		}
		got = append(got, string(f))
	}
	if want := "ping call1 call3"; strings.Join(got, " ") != want {
		t.Errorf("order = %q, want %q", strings.Join(got, " "), want)
	}
	q.close()
	if err := q.push(true, 0, []byte("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("push after close = %v, want ErrClosed", err)
	}
	if _, _, closed := q.pop(); !closed {
		t.Error("pop after close should report closed")
	}
}
