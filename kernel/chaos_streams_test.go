//go:build unix

package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/extkernel/extkernel/sidecar"
)

// chaosConsumer is how a stream's consumer takes its chunks: as they come,
// slowly (a pause after each), or stalling (it stops taking them for a
// while after some chunk, then cancels the stream).
type chaosConsumer struct {
	delay   time.Duration // after each chunk
	stallAt int           // the chunk after which it stalls, or 0
	stall   time.Duration
}

// pickConsumer returns a consumer for a stream of n chunks, at random: one
// in two takes them as they come, one in four slowly, one in four stalls.
func pickConsumer(n int) chaosConsumer {
	switch rand.IntN(4) {
	case 0:
		return chaosConsumer{delay: time.Duration(1+rand.IntN(3)) * time.Millisecond}
	case 1:
		return chaosConsumer{stallAt: 1 + rand.IntN(n), stall: time.Duration(20+rand.IntN(100)) * time.Millisecond}
	}
	return chaosConsumer{}
}

// pauses is the most time the consumer adds to a stream of n chunks.
func (c chaosConsumer) pauses(n int) time.Duration {
	return time.Duration(n)*c.delay + c.stall
}

// pickStream returns the input of a stream: 1 to 24 chunks of 0, 512,
// 8 KiB or 48 KiB of padding (past the byte window, 256 KiB, after 5),
// and the number of chunks.
func pickStream() (json.RawMessage, int) {
	n := 1 + rand.IntN(24)
	size := []int{0, 512, 8 << 10, 48 << 10}[rand.IntN(4)]
	return json.RawMessage(fmt.Sprintf(`{"n":%d,"size":%d}`, n, size)), n
}

// stream consumes the target's stream (StreamProvider) with a consumer
// picked at random, and checks the outcome: the chunks in order, each
// once, then the normal end, or (after the chunks it sent) a *PluginError
// naming the target; a stalled consumer cancels after its stall. It
// succeeds when every chunk came, or every chunk up to the stall.
func (r *chaosRig) stream(c *chaosCall) (bool, error) {
	in, n := pickStream()
	cons := pickConsumer(n)
	c.pauses = cons.pauses(n)
	if cons.delay > 0 {
		r.st.slowConsumers.Add(1)
	}
	got := 0
	for data, err := range r.k.StreamProvider(context.Background(), "plugin/"+c.target+"/stream", in) {
		if err != nil {
			_, err = r.checkDirect(c, nil, err, pluginCodes)
			return false, err
		}
		var chunk struct{ I int }
		if json.Unmarshal(data, &chunk) != nil || chunk.I != got+1 {
			r.st.violate("a stream of %q sent chunk %d as %.80s", c.target, got+1, data)
			return false, nil
		}
		if got++; got == cons.stallAt {
			r.st.stalls.Add(1)
			time.Sleep(cons.stall)
			return true, nil // breaking out cancels the stream
		}
		time.Sleep(cons.delay)
	}
	if got != n {
		r.st.violate("a stream of %q ended normally after %d chunks of %d", c.target, got, n)
		return false, nil
	}
	return true, nil
}

// relay makes the target consume callee's stream through the host
// (capability/call with a stream) with a consumer picked at random, and
// checks the outcome: the count of chunks it took, in order (all of them,
// or those up to its stall), or the stream's error, a *PluginError naming
// the target that passes on a code of a call through the host.
func (r *chaosRig) relay(c *chaosCall, callee string) (bool, error) {
	in, n := pickStream()
	cons := pickConsumer(n)
	if cons.delay > 0 {
		r.st.slowConsumers.Add(1)
	}
	req := fmt.Sprintf(`{"capability":"chaos.%s","method":"stream","input":%s,"delay_ms":%d,"stall_at":%d,"stall_ms":%d}`,
		callee, in, cons.delay.Milliseconds(), cons.stallAt, cons.stall.Milliseconds())
	out, err := r.k.CallProvider(context.Background(), "plugin/"+c.target+"/relay", json.RawMessage(req))
	if ok, err := r.checkDirect(c, out, err, calleeCodes); !ok {
		return false, err
	}
	var res struct {
		Chunks int
		Bad    string
	}
	want := n
	if cons.stallAt > 0 {
		want = cons.stallAt
		r.st.stalls.Add(1)
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Bad != "" || res.Chunks != want {
		r.st.violate("%q relaying a stream of %d chunks of %q (stalling at %d) answered %s", c.target, n, callee, cons.stallAt, out)
		return false, nil
	}
	return true, nil
}

// streamWatch follows every stream the kernel opens (streamOpened) for a
// while, to check that none held more chunks than its window, or more
// bytes than the byte window (or one chunk past it alone).
type streamWatch struct {
	mu      sync.Mutex
	open    []watched
	count   int
	peak    int   // the most chunks one stream held
	peakB   int64 // the most bytes one stream held
	tooMany []string
}

// watched is a stream and when it was opened.
type watched struct {
	s    *sidecar.Stream
	when time.Time
}

// add is the streamOpened hook.
func (w *streamWatch) add(s *sidecar.Stream) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open = append(w.open, watched{s, time.Now()})
	w.count++
}

// watch checks, every 50ms until ctx is done, the streams opened more
// than 2s ago (which every deadline has ended), and forgets them.
func (w *streamWatch) watch(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.sweep(time.Now().Add(-2 * time.Second))
	}
}

// sweep checks and forgets the streams opened before t.
func (w *streamWatch) sweep(t time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.open[:0]
	for _, o := range w.open {
		if o.when.After(t) {
			kept = append(kept, o)
			continue
		}
		peak, bytes := o.s.Peak()
		w.peak, w.peakB = max(w.peak, peak), max(w.peakB, bytes)
		// A chunk larger than the byte window may come alone; the
		// largest chunk here is far smaller.
		if peak > o.s.Window() || bytes > chaosWindowBytes {
			w.tooMany = append(w.tooMany, fmt.Sprintf("%d chunks (window %d), %d bytes", peak, o.s.Window(), bytes))
		}
	}
	clear(w.open[len(kept):])
	w.open = kept
}

// check checks every stream still followed, once the kernel is closed,
// and turns the streams that held too much into a violation.
func (w *streamWatch) check(st *chaosStats) {
	w.sweep(time.Now().Add(time.Hour))
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.tooMany) > 0 {
		st.violate("%d streams held more than their windows (of %d chunks, or %d bytes): %v", len(w.tooMany),
			16, chaosWindowBytes, w.tooMany)
	}
}
