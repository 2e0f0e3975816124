//go:build unix

package sidecar

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/extkernel/extkernel/internal/process"
	"github.com/extkernel/extkernel/internal/wire"
)

// TestOutQueueUrgentFirst checks that pings and cancels jump the queue of
// ordinary calls, that a queued request can be withdrawn unsent, and that
// the writer goroutine is started once, when the first frame waits.
func TestOutQueueUrgentFirst(t *testing.T) {
	starts := 0
	q := newOutQueue(1<<20, func() { starts++ })
	for i, f := range []string{"call1", "call2", "call3"} {
		if _, _, err := q.pushOrTake(frameWait, int64(i+1), []byte(f), false, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := q.pushOrTake(frameUrgent, 0, []byte("ping"), false, 0); err != nil {
		t.Fatal(err)
	}
	if starts != 1 {
		t.Errorf("writer started %d times, want once", starts)
	}
	if !q.remove(2) || q.remove(2) {
		t.Error("remove(2) should succeed once")
	}
	var got []string
	for {
		f, ok := q.pop()
		if !ok {
			break
		}
		q.done()
		got = append(got, string(f))
	}
	if want := "ping call1 call3"; strings.Join(got, " ") != want {
		t.Errorf("order = %q, want %q", strings.Join(got, " "), want)
	}
	if _, _, err := q.pushOrTake(frameWait, 5, []byte("call5"), false, 0); err != nil || starts != 2 {
		t.Errorf("push to an empty queue whose writer returned: %v, %d starts; want the writer started again", err, starts)
	}
	q.close()
	if _, _, err := q.pushOrTake(frameUrgent, 0, []byte("late"), false, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("push after close = %v, want ErrClosed", err)
	}
	if _, ok := q.pop(); ok || !q.isClosed() {
		t.Error("pop after close should find nothing")
	}
	if starts != 2 {
		t.Errorf("writer started %d times, want no start once closed", starts)
	}
}

// TestOutQueueDirectWrite checks the right to write: a caller takes it
// when nothing is queued or being written, later frames queue meanwhile
// (without starting the writer goroutine, which the caller's giveBack
// starts), and the rest of the caller's frame is written before any of
// them.
func TestOutQueueDirectWrite(t *testing.T) {
	starts := 0
	q := newOutQueue(1<<20, func() { starts++ })
	if mine, _, err := q.pushOrTake(frameWait, 1, []byte("call1"), true, 0); !mine || err != nil {
		t.Fatalf("first frame: mine = %v, %v; want the right to write", mine, err)
	}
	if mine, _, _ := q.pushOrTake(frameWait, 2, []byte("call2"), true, 0); mine {
		t.Fatal("second frame taken while the first is being written")
	}
	if mine, _, _ := q.pushOrTake(frameUrgent, 0, []byte("ping"), true, 0); mine {
		t.Fatal("ping taken while a frame is being written")
	}
	if starts != 0 {
		t.Errorf("writer started %d times while a caller writes, want 0", starts)
	}
	if _, ok := q.pop(); ok {
		t.Fatal("the writer goroutine popped while a caller writes")
	}
	q.giveBack([]byte("ll1"))
	if starts != 1 {
		t.Errorf("writer started %d times after giveBack, want 1", starts)
	}
	var got []string
	for {
		f, ok := q.pop()
		if !ok {
			break
		}
		if len(got) == 0 {
			if mine, _, _ := q.pushOrTake(frameWait, 9, []byte("late"), true, 0); mine {
				t.Fatal("frame taken while the writer goroutine writes")
			}
		}
		q.done()
		got = append(got, string(f))
	}
	if want := "ll1 ping call2 late"; strings.Join(got, " ") != want {
		t.Errorf("order = %q, want %q", strings.Join(got, " "), want)
	}
	if starts != 1 {
		t.Errorf("writer started %d times while it ran, want 1", starts)
	}
	if mine, _, _ := q.pushOrTake(frameWait, 10, []byte("call10"), true, 0); !mine {
		t.Error("an idle, empty queue did not give the right to write")
	}
	q.giveBack(nil)
	if _, ok := q.pop(); ok {
		t.Error("a frame written whole was popped again")
	}
	if starts != 1 {
		t.Errorf("writer started %d times for a frame written whole, want 1", starts)
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

// TestConcurrentLargeCalls makes concurrent echo calls whose frames are
// larger than the pipe holds, so that direct writes stop part way and the
// writer goroutine finishes them, and checks that every call gets its own
// input back (frames never interleave).
func TestConcurrentLargeCalls(t *testing.T) {
	opts, _ := testOptions(t)
	c := startGood(t, opts)
	defer closeClient(t, c)
	if !process.Portable && c.direct == nil {
		t.Error("stdin is not written directly on Linux")
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				size := 10 + (g*10+i)*20000 // up to 800 kB
				in := json.RawMessage(`"` + strings.Repeat(string(rune('a'+g)), size) + `"`)
				out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: in})
				if err != nil || !bytes.Equal(out, in) {
					t.Errorf("caller %d call %d: %d bytes back, %v; want its %d-byte input", g, i, len(out), err, len(in))
					return
				}
			}
		}()
	}
	wg.Wait()
}
