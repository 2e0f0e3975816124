package sdk

import (
	"sync"
	"sync/atomic"
	"time"
)

// inlineBound is how long a handler runs holding the read role before the
// role moves to another worker: the longest a request (ping and $/cancel
// included) waits to be read behind a running handler, give or take the
// runtime's timer resolution (about a millisecond under load).
const inlineBound = 200 * time.Microsecond

// maxIdleWorkers bounds the workers kept waiting for the read role. A
// worker keeps the stack its handlers grew, so reusing one saves the stack
// growth and the goroutine start of a new one.
const maxIdleWorkers = 16

// scheduler decides which goroutine reads the host's requests and which
// runs each handler. Workers read and run the requests, one at a time
// holding the read role: holding it, a worker reads (read) until a request
// is for a handler, and runs that handler itself (run), still holding the
// role, so a quick handler costs no goroutine switch: the same thread
// reads, runs and answers, then reads on. A handler that runs past bound
// loses the role: a timer hands it to an idle worker (or a new one), which
// reads on while the handler runs, and after such a hand-off (or after any
// handler that took bound or longer, see observe) the next requests hand
// the role over at once, before their handler runs, until a handler
// returns within the bound again. A handler that calls the host (Call)
// while it holds the role keeps it and reads on its own goroutine until
// its answer comes (claimRead, keepRead): the answer costs no goroutine
// switch, and while it reads no timer takes the role. If it reads a
// request for a handler meanwhile, it hands the role over with that
// request (handOver) and waits for its answer as any other caller. A
// caller that does not hold the role gives up any handler's role before
// it waits (release), without waiting for the timer, so that its answer
// is read. A worker that lost the role waits idle
// for it again after its handler, unless maxIdleWorkers others already
// wait. The worker whose read ends the loop (read returns a nil call)
// sends read's error to serve and keeps the role.
//
// # Lifecycle
//
// newScheduler, then serve once, then close once. Every goroutine the
// scheduler started has ended when close(true) returns.
type scheduler struct {
	read  func() (*call, error) // a nil call ends the read loop
	run   func(*call)           // runs the handler, calls observe, answers
	bound time.Duration

	// role is unbuffered: a send hands the role to an idle worker, and
	// succeeds only when one waits; a non-nil call sent is a request read
	// already, which the worker runs first. stop ends the idle workers.
	role        chan *call
	loopDone    chan error
	stop        chan struct{}
	workers     sync.WaitGroup
	idleWorkers atomic.Int32

	// A handler runs holding the read role (see runHolding) as episode
	// number inline, 0 when none does, selfReading while one of its calls
	// reads for its answer (claimRead); handoff is the timer that takes the
	// role from it after bound, and slow is set while handlers run longer
	// than that without waiting for a call (their longest stretch, see
	// stretches).
	inline  atomic.Uint64
	episode atomic.Uint64
	slow    atomic.Bool
	// observed is the last episode whose handler returned (observe):
	// slow is then its decision, not the timer's.
	observed atomic.Uint64
	handoff  atomic.Pointer[time.Timer] // created by the first request

	// moves counts the times the role went to another goroutine (passRole,
	// handOver), for tests.
	moves atomic.Uint64
}

// newScheduler returns a scheduler that reads with read and runs calls with
// run, handing the role over after bound.
func newScheduler(bound time.Duration, read func() (*call, error), run func(*call)) *scheduler {
	return &scheduler{
		read:     read,
		run:      run,
		bound:    bound,
		role:     make(chan *call),
		loopDone: make(chan error, 1),
		stop:     make(chan struct{}),
	}
}

// serve starts the first worker, which runs c holding the read role, and
// returns read's error once a worker has ended the read loop. Handlers may
// still run.
func (sc *scheduler) serve(c *call) error {
	sc.workers.Add(1)
	go sc.worker(c)
	return <-sc.loopDone
}

// close stops the hand-off timer and ends the idle workers; with wait, it
// waits for every worker (a worker running a handler ends after it).
func (sc *scheduler) close(wait bool) {
	if t := sc.handoff.Load(); t != nil {
		t.Stop()
	}
	close(sc.stop)
	if wait {
		sc.workers.Wait()
	}
}

// observe records that the handler of episode ep (0 for one that ran
// without the role) ran for d at the longest without waiting for a call
// (see stretches). run calls it before writing the answer, so
// the next request the host sends already sees it; if the timer fires
// while that answer is written, it hands the role over without overriding
// what observe decided (handoffFired).
func (sc *scheduler) observe(ep uint64, d time.Duration) {
	sc.slow.Store(d >= sc.bound)
	if ep != 0 {
		sc.observed.Store(ep)
	}
}

// worker is a worker's life (see scheduler). A worker given a call c
// starts by running it, holding the role.
func (sc *scheduler) worker(c *call) {
	defer sc.workers.Done()
	for {
		if c == nil {
			var err error
			if c, err = sc.read(); c == nil {
				sc.loopDone <- err
				return
			}
		}
		held := sc.runHolding(c)
		c = nil
		if held {
			continue // still the reader
		}
		if !sc.takeIdleSlot() {
			return
		}
		select {
		case c = <-sc.role:
			sc.idleWorkers.Add(-1)
		case <-sc.stop:
			return
		}
	}
}

// runHolding runs c, which the caller read holding the read role, and
// reports whether the caller still holds the role: unless handlers have
// been slow lately, c runs first with the role kept, and the hand-off
// timer takes it if c runs past bound.
func (sc *scheduler) runHolding(c *call) bool {
	if sc.slow.Load() {
		sc.passRole()
		sc.run(c)
		return false
	}
	ep := sc.episode.Add(1)
	c.ctx.episode = ep
	sc.inline.Store(ep)
	t := sc.handoff.Load()
	if t == nil {
		// Created here rather than at the start of the session: the first
		// timer starts the runtime's poller, which a plugin's start-up
		// need not wait for.
		t = time.AfterFunc(sc.bound, sc.handoffFired)
		sc.handoff.Store(t)
	} else {
		t.Reset(sc.bound)
	}
	sc.run(c)
	if !sc.inline.CompareAndSwap(ep, 0) {
		return false // the timer handed the role over
	}
	t.Stop()
	return true
}

// handoffFired runs on the hand-off timer: if a handler still runs
// holding the read role, the role moves on and later requests are handed
// over at once.
func (sc *scheduler) handoffFired() {
	ep := sc.inline.Load()
	if ep == 0 || ep == selfReading || !sc.inline.CompareAndSwap(ep, 0) {
		return // the handler returned first, or its call reads
	}
	if sc.observed.Load() != ep {
		sc.slow.Store(true) // the handler itself runs past bound
	}
	sc.passRole()
}

// release hands the read role over at once if a handler runs holding it,
// as the hand-off timer would after bound. Call uses it before it waits
// for the host, so that the answer it waits for (and any request the host
// sends meanwhile) is read: a handler blocked in Call never holds the
// role. Whether later requests hand over at once is left to observe, once
// the handler returns.
func (sc *scheduler) release() {
	ep := sc.inline.Load()
	if ep == 0 || ep == selfReading || !sc.inline.CompareAndSwap(ep, 0) {
		return // no handler holds the role, the timer took it first, or a call reads
	}
	sc.passRole()
}

// selfReading is inline's value while a call of the handler holding the
// role reads on the caller's goroutine. Episode numbers never reach it.
const selfReading = ^uint64(0)

// claimRead reports whether the caller, a goroutine of the handler that
// runs as episode ep (0 for a handler that does not hold the role), now
// reads the host's messages itself: it does when that handler still holds
// the role and no other of its calls reads. Until keepRead, handOver or
// endRead, neither the timer nor release takes the role.
func (sc *scheduler) claimRead(ep uint64) bool {
	return ep != 0 && sc.inline.CompareAndSwap(ep, selfReading)
}

// keepRead ends a claimRead whose call was answered: the handler of
// episode ep holds the role again, and the timer gets a whole bound
// before it takes it.
func (sc *scheduler) keepRead(ep uint64) {
	if sc.inline.CompareAndSwap(selfReading, ep) {
		if t := sc.handoff.Load(); t != nil {
			t.Reset(sc.bound)
		}
	}
}

// handOver ends a claimRead that read c, a request for a handler, before
// its call's answer: the role goes with c to an idle worker (or a new
// one), which runs c first, as the reader of a request does.
func (sc *scheduler) handOver(c *call) {
	sc.inline.Store(0)
	sc.passRoleWith(c)
}

// endRead ends a claimRead whose read ended the read loop, with err as
// read's: it goes to serve, and nobody reads any more.
func (sc *scheduler) endRead(err error) {
	sc.inline.Store(0)
	sc.loopDone <- err
}

// passRole hands the read role to an idle worker, or to a new one when
// none waits.
func (sc *scheduler) passRole() { sc.passRoleWith(nil) }

// passRoleWith hands the read role, with c (a request read already, which
// the worker runs first) or nil, to an idle worker or a new one.
func (sc *scheduler) passRoleWith(c *call) {
	sc.moves.Add(1)
	select {
	case sc.role <- c:
	default:
		sc.workers.Add(1)
		go sc.worker(c)
	}
}

// takeIdleSlot reserves one of the maxIdleWorkers idle places.
func (sc *scheduler) takeIdleSlot() bool {
	for {
		n := sc.idleWorkers.Load()
		if n >= maxIdleWorkers {
			return false
		}
		if sc.idleWorkers.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
