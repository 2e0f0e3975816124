package sdk

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// behaviour is what a fake handler does in TestScheduler.
type behaviour struct {
	took       time.Duration // reported to observe
	waitFor    int           // if > 0: return only once that call was read
	sequential bool          // read only once the call before ran, as a host awaiting each answer
}

// schedRun records which goroutine read and ran each call of a
// TestScheduler case.
type schedRun struct {
	mu     sync.Mutex
	next   int
	ranOn  []string
	readCh []chan struct{} // closed once call i was read
	ranCh  []chan struct{} // closed once call i ran
}

// TestScheduler drives the read-role scheduler with fake reads and
// handlers: quick handlers run on the reading goroutine; a handler past
// the bound loses the role to another worker; after a slow handler the
// next one hands the role over before it runs, and once a handler is quick
// again, calls run on the reading goroutine. A case whose hand-off does
// not happen deadlocks and fails at the wait's deadline.
func TestScheduler(t *testing.T) {
	const never = time.Hour // a bound the timer never reaches in a test
	tests := []struct {
		name  string
		bound time.Duration
		calls []behaviour
		check func(t *testing.T, ranOn []string)
	}{
		{
			name: "quick calls run on the reading goroutine", bound: never,
			calls: []behaviour{{}, {}, {}},
			check: func(t *testing.T, ranOn []string) {
				if ranOn[0] != ranOn[1] || ranOn[1] != ranOn[2] {
					t.Errorf("quick calls ran on goroutines %v, want one", ranOn)
				}
			},
		},
		{
			name: "a handler past the bound hands the role over", bound: time.Nanosecond,
			calls: []behaviour{{waitFor: 1}, {}},
			check: func(t *testing.T, ranOn []string) {
				if ranOn[0] == ranOn[1] {
					t.Errorf("both calls ran on goroutine %s", ranOn[0])
				}
			},
		},
		{
			name: "after a slow handler the role is handed over at once", bound: never,
			calls: []behaviour{{took: never}, {waitFor: 2}, {}, {sequential: true}, {sequential: true}},
			check: func(t *testing.T, ranOn []string) {
				if ranOn[1] == ranOn[2] {
					t.Errorf("calls 1 and 2 ran on goroutine %s, want 1 handed over", ranOn[1])
				}
				if ranOn[3] != ranOn[4] {
					t.Errorf("calls 3 and 4 ran on goroutines %s and %s, want the reading one", ranOn[3], ranOn[4])
				}
			},
		},
	}
	errEnd := errors.New("end of input")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(tt.calls)
			r := &schedRun{next: 1, ranOn: make([]string, n), readCh: make([]chan struct{}, n), ranCh: make([]chan struct{}, n)}
			calls := make([]*call, n)
			for i := range calls {
				calls[i] = &call{key: string(rune('0' + i))}
				r.readCh[i], r.ranCh[i] = make(chan struct{}), make(chan struct{})
			}
			close(r.readCh[0]) // read by the caller of serve
			index := func(c *call) int { return int(c.key[0] - '0') }
			var sc *scheduler
			read := func() (*call, error) {
				r.mu.Lock()
				i := r.next
				r.mu.Unlock()
				if i == n {
					return nil, errEnd
				}
				if tt.calls[i].sequential {
					<-r.ranCh[i-1]
				}
				r.mu.Lock()
				r.next++
				r.mu.Unlock()
				close(r.readCh[i])
				return calls[i], nil
			}
			run := func(c *call) {
				i := index(c)
				if w := tt.calls[i].waitFor; w > 0 {
					<-r.readCh[w]
				}
				sc.observe(c.ctx.episode, tt.calls[i].took)
				r.mu.Lock()
				r.ranOn[i] = goroutineID()
				r.mu.Unlock()
				close(r.ranCh[i])
			}
			sc = newScheduler(tt.bound, read, run)
			done := make(chan error, 1)
			go func() { done <- sc.serve(calls[0]) }()
			select {
			case err := <-done:
				if !errors.Is(err, errEnd) {
					t.Fatalf("serve = %v, want the read loop's error", err)
				}
			case <-time.After(waitLimit):
				t.Fatal("serve did not return: a hand-off did not happen")
			}
			sc.close(true)
			r.mu.Lock()
			defer r.mu.Unlock()
			tt.check(t, r.ranOn)
		})
	}
}
