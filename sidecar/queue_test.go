//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/internal/wire"
)

// TestOutQueueBudget holds the byte budget to its rules: a frame that can
// wait waits while the queue holds its budget (an empty queue takes any
// frame), and is woken when the queue drains; an answer is taken up to
// twice the budget, an error answer a slack more; an urgent frame always;
// the queue reports how long it has been over its budget.
func TestOutQueueBudget(t *testing.T) {
	q := newOutQueue(100, func() {})
	frame := func(n int) []byte { return []byte(strings.Repeat("x", n)) }
	push := func(kind frameKind, n int) (<-chan struct{}, error) {
		_, room, err := q.pushOrTake(kind, 0, frame(n), false, 0)
		return room, err
	}
	if room, err := push(frameWait, 150); room != nil || err != nil {
		t.Fatalf("a frame larger than the budget into an empty queue: room %v, %v; want it taken", room, err)
	}
	room, err := push(frameWait, 10)
	if room == nil || err != nil {
		t.Fatalf("a frame into a full queue: room %v, %v; want to wait", room, err)
	}
	if over, bytes := q.over(time.Now().Add(time.Second)); over < time.Second || bytes != 150 {
		t.Errorf("over = %v, %d bytes; want over for at least a second, 150 bytes", over, bytes)
	}
	if room2, err := push(frameAnswer, 40); room2 != nil || err != nil {
		t.Errorf("an answer within twice the budget: %v, %v; want it taken", room2, err)
	}
	if _, err := push(frameAnswer, 20); !errors.Is(err, errQueueFull) {
		t.Errorf("an answer past twice the budget: %v, want errQueueFull", err)
	}
	if _, err := push(frameReply, 20); err != nil {
		t.Errorf("an error answer within the slack: %v, want it taken", err)
	}
	if _, err := push(frameReply, replySlack); !errors.Is(err, errQueueFull) {
		t.Errorf("an error answer past the slack: %v, want errQueueFull", err)
	}
	if _, err := push(frameUrgent, 1000); err != nil {
		t.Errorf("an urgent frame: %v, want it taken", err)
	}
	select {
	case <-room:
		t.Fatal("room signalled before anything drained")
	default:
	}
	for {
		if _, ok := q.pop(); !ok {
			break
		}
		q.done()
	}
	select {
	case <-room:
	default:
		t.Fatal("room not signalled once the queue drained")
	}
	if over, bytes := q.over(time.Now()); over != 0 || bytes != 0 {
		t.Errorf("after draining: over %v, %d bytes; want 0, 0", over, bytes)
	}
	// A sender waiting for room saturates the queue, even at its budget.
	q.pushOrTake(frameWait, 0, frame(80), false, 0)
	if room, _ := push(frameWait, 30); room == nil {
		t.Fatal("a frame past the budget did not wait")
	}
	if over, _ := q.over(time.Now().Add(time.Second)); over < time.Second {
		t.Errorf("a queue with a sender waiting is not saturated: over %v", over)
	}
	for {
		if _, ok := q.pop(); !ok {
			break
		}
		q.done()
	}
	if _, room, err := q.pushOrTake(frameWait, 0, frame(10), false, 0); room != nil || err != nil || q.mu.overSince != (time.Time{}) {
		t.Errorf("after draining, a frame waits: %v, %v", room, err)
	}
	q.close()
	if _, _, err := q.pushOrTake(frameUrgent, 0, frame(1), false, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("after close: %v, want ErrClosed", err)
	}
}

// TestSlowReaderWedged: a plugin that reads its stdin slowly but steadily
// while the host keeps sending is never caught by the bound of one write,
// but its queue stays over its budget: it is stopped as wedged, and what
// the host held for it never passed the budget and one frame.
func TestSlowReaderWedged(t *testing.T) {
	opts, _ := testOptions(t)
	opts.Limits.QueueBytes = 64 << 10
	opts.writeStall = 500 * time.Millisecond
	crashed := make(chan *CrashError, 1)
	opts.OnCrash = func(_ *Client, e *CrashError) { crashed <- e }
	c, err := Start(context.Background(), installFixture(t, "slow-reader"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	input := json.RawMessage(`"` + strings.Repeat("a", 16<<10) + `"`)
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "echo", Input: input}); err != nil {
					var ce *CrashError
					if errors.As(err, &ce) || errors.Is(err, ErrClosed) {
						return
					}
				}
			}
		}()
	}
	e := recv(t, crashed, "the wedge")
	cancel()
	wg.Wait()
	if !errors.Is(e, ErrWedged) {
		t.Errorf("crash = %v, want ErrWedged", e)
	}
	c.out.mu.Lock()
	peak := c.out.mu.peak
	c.out.mu.Unlock()
	if frame := int64(len(input)) + 200; peak > int64(opts.Limits.QueueBytes)+frame {
		t.Errorf("the host held up to %d bytes for the plugin, over its budget %d and a frame", peak, int64(opts.Limits.QueueBytes))
	}
	t.Logf("peak queued bytes %d (budget %d): %v", peak, int64(opts.Limits.QueueBytes), e)
}

// TestCallFloodBounded: a plugin that sends 400 calls answered 1 MiB each
// and never reads its stdin does not make the host hold their answers: the
// queue stays within twice its budget, a slack and the rest of the one
// frame a caller started, and the plugin is stopped as wedged.
func TestCallFloodBounded(t *testing.T) {
	opts, logs := testOptions(t)
	defer func() { t.Log(tailString(logs.String(), 3000)) }()
	opts.Limits.QueueBytes = 256 << 10
	big := json.RawMessage(`"` + strings.Repeat("b", 1<<20) + `"`)
	opts.OnCall = func(context.Context, Call) (json.RawMessage, error) { return big, nil }
	crashed := make(chan *CrashError, 1)
	opts.OnCrash = func(_ *Client, e *CrashError) { crashed <- e }
	c, err := Start(context.Background(), installFixture(t, "call-flood"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	e := recv(t, crashed, "the wedge")
	if !errors.Is(e, ErrWedged) {
		t.Errorf("crash = %v, want ErrWedged", e)
	}
	c.out.mu.Lock()
	peak := c.out.mu.peak
	c.out.mu.Unlock()
	if bound := 2*int64(opts.Limits.QueueBytes) + replySlack + int64(len(big)) + 200; peak > bound {
		t.Errorf("the host held up to %d bytes for the plugin, want at most %d", peak, bound)
	}
	t.Logf("peak queued bytes %d (budget %d): %v", peak, int64(opts.Limits.QueueBytes), e)
}

// TestOutQueueReserve: bytes reserved for an answer count as queued ones
// do, against the hard bound and the budget, until the answer takes
// their place or they are given back; a closed queue refuses a
// reservation and forgets the ones it had.
func TestOutQueueReserve(t *testing.T) {
	q := newOutQueue(100, func() {})
	if err := q.reserve(150); err != nil {
		t.Fatalf("a reservation into an empty queue: %v, want it taken", err)
	}
	if err := q.reserve(60); !errors.Is(err, errQueueFull) {
		t.Errorf("a reservation past twice the budget: %v, want errQueueFull", err)
	}
	if _, room, _ := q.pushOrTake(frameWait, 0, []byte("x"), false, 0); room == nil {
		t.Error("a frame that can wait did not wait behind a reservation over the budget")
	}
	if over, bytes := q.over(time.Now().Add(time.Second)); over < time.Second || bytes != 150 {
		t.Errorf("over = %v, %d bytes; want saturated, 150 bytes", over, bytes)
	}
	if err := q.reserve(50); err != nil {
		t.Errorf("a reservation within twice the budget: %v, want it taken", err)
	}
	// The answer is shorter than its reservation: the rest is given back.
	if mine, _, err := q.pushOrTake(frameAnswer, 0, []byte(strings.Repeat("a", 120)), false, 150); mine || err != nil {
		t.Errorf("an answer with its reservation: mine %v, %v; want it queued", mine, err)
	}
	q.release(50)
	if _, bytes := q.over(time.Now()); bytes != 120 {
		t.Errorf("%d bytes queued after the answer took its reservation's place, want 120", bytes)
	}
	if err := q.reserve(10); err != nil {
		t.Fatal(err)
	}
	q.close()
	q.release(10)
	if err := q.reserve(1); !errors.Is(err, ErrClosed) {
		t.Errorf("a reservation after close: %v, want ErrClosed", err)
	}
	if _, bytes := q.over(time.Now()); bytes != 0 {
		t.Errorf("%d bytes counted after close, want 0", bytes)
	}
}

// TestCallFloodHeapBounded: a plugin that sends 400 calls answered 4 MB
// each and never reads its stdin does not make the host copy more
// answers than its queue's hard bound holds. The answers of the calls
// served at once (up to 64) are counted in the queue before they are
// encoded, so the ones that cannot fit are answered with a short error
// and never copied: before, each was copied (twice) and then refused,
// and the heap in use reached about 400 MiB.
func TestCallFloodHeapBounded(t *testing.T) {
	opts, _ := testOptions(t)
	opts.writeStall = time.Second
	big := json.RawMessage(`"` + strings.Repeat("b", 4_000_000) + `"`)
	opts.OnCall = func(context.Context, Call) (json.RawMessage, error) { return big, nil }
	crashed := make(chan *CrashError, 1)
	opts.OnCrash = func(_ *Client, e *CrashError) { crashed <- e }
	base, _ := proctest.HeapAfterGC()
	stop := proctest.SampleHeap(5 * time.Millisecond)
	c, err := Start(context.Background(), installFixture(t, "call-flood"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	e := recv(t, crashed, "the wedge")
	peak := stop()
	if !errors.Is(e, ErrWedged) {
		t.Errorf("crash = %v, want ErrWedged", e)
	}
	c.out.mu.Lock()
	queued := c.out.mu.peak
	c.out.mu.Unlock()
	t.Logf("heap in use: %d MiB before, up to %d MiB while the plugin flooded; up to %d bytes queued or reserved (budget %d)",
		base>>20, peak.InUse>>20, queued, c.opts.queueBytes)
	// The queue's hard bound (8 MiB), one answer being encoded past it
	// and the frames read: 64 MiB leaves room for what the GC has not
	// collected yet.
	if peak.InUse > base+64<<20 {
		t.Errorf("the heap in use reached %d MiB, %d MiB over the baseline: the host copied answers it then refused",
			peak.InUse>>20, (peak.InUse-base)>>20)
	}
	if bound := 2*c.opts.queueBytes + replySlack + int64(len(big)) + 200; queued > bound {
		t.Errorf("%d bytes queued or reserved, want at most %d", queued, bound)
	}
}

// TestCallsRefusedOverBudget: a plugin whose queue is over its budget
// does not get its calls served: they are answered at once with an error
// and the host's handler does not run, so a plugin that floods calls and
// reads slowly cannot make the host make answers only to refuse them.
// Here 500 calls a second, each answered 512 KiB, against a budget of
// 1 MiB, from a plugin reading a frame every 200ms: before, the handler
// ran for nearly every call (about 500 in the second before the wedge);
// now for the few that find room.
func TestCallsRefusedOverBudget(t *testing.T) {
	opts, _ := testOptions(t)
	opts.Limits.QueueBytes = 1 << 20
	opts.writeStall = time.Second
	var runs atomic.Int64
	opts.OnCall = func(context.Context, Call) (json.RawMessage, error) {
		runs.Add(1)
		return json.RawMessage(`"` + strings.Repeat("a", 512<<10) + `"`), nil
	}
	crashed := make(chan *CrashError, 1)
	opts.OnCrash = func(_ *Client, e *CrashError) { crashed <- e }
	manifest := `{"format": 1, "name": "flood", "version": "0.1.0", "runtime": {"command": "./faulty", "args": ["slow-call-flood"],
	  "env": {"FAULTY_CALL": "test.big:get", "FAULTY_EVERY": "2ms", "FAULTY_READ_EVERY": "200ms"}}}`
	c, err := Start(context.Background(), addPackage(t, t.TempDir(), "flood", manifest), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	start := time.Now()
	e := recv(t, crashed, "the wedge")
	if !errors.Is(e, ErrWedged) {
		t.Errorf("crash = %v, want ErrWedged", e)
	}
	elapsed := time.Since(start)
	t.Logf("the handler ran %d times in the %v before the wedge", runs.Load(), elapsed.Round(time.Millisecond))
	// The calls served at once before any answer is queued (64 at most),
	// and about one for each frame the plugin reads (5 a second).
	if bound := int64(64 + 10*elapsed.Seconds()); runs.Load() > bound {
		t.Errorf("the handler ran %d times, want at most %d: calls were served while the queue was over its budget", runs.Load(), bound)
	}
}
