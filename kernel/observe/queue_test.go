package observe_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extkernel/extkernel/kernel/observe"
)

func notify(name string, data int) observe.Event {
	e := observe.Event{Type: observe.EventNotify, Plugin: "p", Name: name}
	if data > 0 {
		e.Data = json.RawMessage(`"` + strings.Repeat("x", data-2) + `"`)
	}
	return e
}

func crash(name string) observe.Event {
	return observe.Event{Type: observe.EventPluginCrashed, Plugin: name}
}

// names lists the events by their Name, or their Plugin when they have
// none.
func names(events []observe.Event) string {
	var out []string
	for _, e := range events {
		if e.Name != "" {
			out = append(out, e.Name)
		} else {
			out = append(out, e.Plugin)
		}
	}
	return strings.Join(out, " ")
}

// TestEventSize: the overhead plus every text and the data.
func TestEventSize(t *testing.T) {
	e := observe.Event{Type: observe.EventPluginCrashed, Plugin: "ab", State: "cde", Message: "f", Name: "gh",
		Err: errors.New("ijkl"), Data: json.RawMessage(`12345`)}
	if got, want := e.Size(), int64(observe.EventOverhead+2+3+1+2+4+5); got != want {
		t.Errorf("Size = %d, want %d", got, want)
	}
	if got := (observe.Event{}).Size(); got != observe.EventOverhead {
		t.Errorf("zero Event's Size = %d, want %d", got, observe.EventOverhead)
	}
}

// TestQueueBounds pushes sequences into small queues and checks what is
// taken, in order, and how many were dropped.
func TestQueueBounds(t *testing.T) {
	o := int(observe.EventOverhead)
	tests := []struct {
		name      string
		maxEvents int
		maxBytes  int64
		push      []observe.Event
		want      string
		dropped   uint64
	}{
		{name: "within", maxEvents: 4, push: []observe.Event{crash("a"), notify("n1", 0), crash("b")}, want: "a n1 b"},
		{name: "count: newest dropped", maxEvents: 2,
			push: []observe.Event{crash("a"), crash("b"), crash("c"), crash("d")}, want: "a b", dropped: 2},
		{name: "notifies get half the count", maxEvents: 4,
			push: []observe.Event{notify("n1", 0), notify("n2", 0), notify("n3", 0), crash("a"), crash("b"), crash("c")},
			want: "n1 n2 a b", dropped: 2},
		{name: "notifies get half the bytes", maxEvents: 100, maxBytes: int64(4*o + 2000),
			push: []observe.Event{notify("n1", 800), notify("n2", 800), crash("a"), notify("n3", 10), crash("b")},
			want: "n1 a n3 b", dropped: 1},
		{name: "others may fill it all", maxEvents: 3,
			push: []observe.Event{crash("a"), crash("b"), crash("c"), notify("n1", 0)}, want: "a b c", dropped: 1},
		{name: "too large alone", maxEvents: 10, maxBytes: int64(2*o + 100),
			push: []observe.Event{notify("big", 200), crash("a")}, want: "a", dropped: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &observe.Queue{MaxEvents: tt.maxEvents, MaxBytes: tt.maxBytes}
			var dropped uint64
			for _, e := range tt.push {
				if !q.Push(e) {
					dropped++
				}
			}
			got, n := q.Take()
			if names(got) != tt.want || n != tt.dropped || dropped != tt.dropped {
				t.Errorf("Take = %q, %d dropped (Push refused %d); want %q, %d", names(got), n, dropped, tt.want, tt.dropped)
			}
			if got, n := q.Take(); got != nil || n != 0 {
				t.Errorf("second Take = %q, %d; want nothing", names(got), n)
			}
		})
	}
}

// TestQueueTakeFreesRoom: what Take took no longer counts.
func TestQueueTakeFreesRoom(t *testing.T) {
	q := &observe.Queue{MaxEvents: 2}
	for round := range 3 {
		q.Push(crash("a"))
		q.Push(crash("b"))
		q.Push(crash("c"))
		if got, n := q.Take(); names(got) != "a b" || n != 1 {
			t.Fatalf("round %d: Take = %q, %d; want a b, 1", round, names(got), n)
		}
	}
}

// TestQueueZeroValue: the zero value queues with the default bounds.
func TestQueueZeroValue(t *testing.T) {
	var q observe.Queue
	for i := range observe.DefaultQueueEvents + 10 {
		q.Push(crash(fmt.Sprint(i)))
	}
	got, n := q.Take()
	if len(got) != observe.DefaultQueueEvents || n != 10 {
		t.Errorf("Take = %d events, %d dropped; want %d, 10", len(got), n, observe.DefaultQueueEvents)
	}
	// A notify with the most data a frame carries fits the notify half.
	if !q.Push(notify("max", 4<<20)) {
		t.Error("a 4 MiB notify was dropped by an empty default queue")
	}
}

// TestQueueReady: Ready announces a push, queued or dropped, and is one
// channel.
func TestQueueReady(t *testing.T) {
	q := &observe.Queue{MaxEvents: 1}
	ready := q.Ready()
	if ready != q.Ready() {
		t.Fatal("Ready returned two channels")
	}
	select {
	case <-ready:
		t.Fatal("ready before any push")
	default:
	}
	for _, e := range []observe.Event{crash("a"), crash("dropped")} {
		q.Push(e)
		select {
		case <-ready:
		default:
			t.Fatalf("no signal after pushing %s", e.Plugin)
		}
	}
}

// TestQueueConcurrent: pushers from many goroutines and one consumer;
// every event is either taken, in each pusher's order, or counted as
// dropped, and no batch is over the bounds.
func TestQueueConcurrent(t *testing.T) {
	const pushers, each = 8, 2000
	q := &observe.Queue{MaxEvents: 64, MaxBytes: 64 * 1024}
	var wg sync.WaitGroup
	for p := range pushers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				e := notify(fmt.Sprint(i), 100)
				if i%10 == 0 {
					e = observe.Event{Type: observe.EventWarning, Message: fmt.Sprint(i)}
				}
				e.Plugin = fmt.Sprint(p)
				q.Push(e)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var taken, dropped uint64
	last := map[string]int{}
	check := func(events []observe.Event, n uint64) {
		var bytes int64
		for _, e := range events {
			bytes += e.Size()
			seq := e.Name + e.Message
			var i int
			fmt.Sscan(seq, &i)
			if prev, ok := last[e.Plugin]; ok && i <= prev {
				t.Errorf("pusher %s: event %d after %d", e.Plugin, i, prev)
			}
			last[e.Plugin] = i
		}
		if len(events) > 64 || bytes > 64*1024 {
			t.Errorf("a batch of %d events, %d bytes: over the bounds", len(events), bytes)
		}
		taken += uint64(len(events))
		dropped += n
	}
	deadline := time.After(time.Minute)
	for finished := false; !finished; {
		select {
		case <-q.Ready():
		case <-done:
			finished = true
		case <-deadline:
			t.Fatal("pushers did not finish")
		}
		check(q.Take())
	}
	if taken+dropped != pushers*each {
		t.Errorf("taken %d + dropped %d != pushed %d", taken, dropped, pushers*each)
	}
}
