//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

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
		_, room, err := q.pushOrTake(kind, 0, frame(n), false)
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
	q.pushOrTake(frameWait, 0, frame(80), false)
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
	if _, room, err := q.pushOrTake(frameWait, 0, frame(10), false); room != nil || err != nil || q.mu.overSince != (time.Time{}) {
		t.Errorf("after draining, a frame waits: %v, %v", room, err)
	}
	q.close()
	if _, _, err := q.pushOrTake(frameUrgent, 0, frame(1), false); !errors.Is(err, ErrClosed) {
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
