// Package parallel runs independent tasks on a bounded set of goroutines.
//
// It exists for the build's hot loops (loading 64 manifests, computing 64
// fingerprints): errgroup with SetLimit starts one goroutine per task,
// and each new goroutine grows its stack from scratch, which a profile of
// a 64-member publication showed costing more CPU than the tasks' system
// calls. For starts at most workers goroutines, each taking the next task
// until none is left.
package parallel

import (
	"sync"
	"sync/atomic"
)

// FileWorkers is the bound of the module's loops over packages whose tasks
// wait mostly on the file system (loading manifests, computing
// fingerprints): 8.
const FileWorkers = 8

// For calls fn(i) once for every i in [0, n), on at most workers
// goroutines at once, and returns when every call has returned. The order
// of the calls is unspecified; fn must be safe to call concurrently. With
// n or workers at most 1, the calls run in order on the caller's
// goroutine. A panic in fn is not recovered.
func For(n, workers int, fn func(i int)) {
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	work := func() {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			fn(i)
		}
	}
	for range workers - 1 {
		wg.Go(work)
	}
	work() // the caller is one of the workers
	wg.Wait()
}
