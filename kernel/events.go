package kernel

import (
	"sync"
	"time"

	"github.com/extkernel/extkernel/kernel/observe"
)

// bus delivers events to subscribers synchronously, in order.
type bus struct {
	mu     sync.Mutex
	next   int
	subs   map[int]func(observe.Event)
	closed bool
}

// Subscribe registers fn to receive every later event until the returned
// function is called or the kernel closes. Events are delivered one at a time,
// in order, from the goroutine that produced them: fn must return quickly and
// must not call back into the kernel's Start, Reload or Close. An
// observe.EventNotify comes from the goroutine reading that plugin's output, so
// fn must not wait there for a call to the same plugin.
//
// The kernel queues nothing for fn: a plugin may send notifies as fast as it
// can write them, each with up to 4 MiB of data. A subscriber that hands
// events to a goroutine of its own MUST bound what it holds: it pushes them
// into an observe.Queue (bounded in events and bytes, dropping and counting
// the newest when full) rather than a slice or a channel it waits on.
//
// An observe.EventNotify's Data is the plugin's JSON as received, not
// redacted: fn receives it raw, the host's to use. Its Name, like every other
// string a plugin supplied, is redacted. A host that shows Data on a
// diagnostic channel redacts it there with config.Config.Redactor (package
// admin does, with admin.Options.Redact).
func (k *Kernel) Subscribe(fn func(observe.Event)) (unsubscribe func()) {
	b := &k.events
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[int]func(observe.Event){}
	}
	id := b.next
	b.next++
	b.subs[id] = fn
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.subs, id)
	}
}

// emit delivers e to every subscriber, setting its Time when unset.
func (b *bus) emit(e observe.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	for i := 0; i < b.next; i++ {
		if fn := b.subs[i]; fn != nil {
			fn(e)
		}
	}
}

func (b *bus) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.subs = nil
}
