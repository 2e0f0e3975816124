package sidecar

import (
	"errors"
	"fmt"
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

// TestFIFOReusesItsSlice checks that a queue that keeps draining does not
// allocate, and that removal keeps the order.
func TestFIFOReusesItsSlice(t *testing.T) {
	var f fifo[queued]
	it := queued{id: 1}
	allocs := testing.AllocsPerRun(100, func() {
		f.push(it)
		f.push(it)
		f.pop()
		f.pop()
	})
	if allocs != 0 {
		t.Errorf("%v allocations per push and pop, want 0", allocs)
	}
	for i := range int64(10) {
		f.push(queued{id: i})
		if i%3 == 0 {
			f.pop()
		}
	}
	if !f.removeFirst(func(q queued) bool { return q.id == 7 }) || f.removeFirst(func(q queued) bool { return q.id == 7 }) {
		t.Error("removeFirst(7) should succeed once")
	}
	var ids []int64
	for {
		q, ok := f.pop()
		if !ok {
			break
		}
		ids = append(ids, q.id)
	}
	if fmt.Sprint(ids) != "[4 5 6 8 9]" {
		t.Errorf("popped %v, want [4 5 6 8 9]", ids)
	}
}
