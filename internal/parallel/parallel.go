// Package parallel runs independent tasks on a bounded set of goroutines.
//
// It exists for the build's hot loops (loading 64 manifests, computing 64
// fingerprints): errgroup with SetLimit starts one goroutine per task,
// and each new goroutine grows its stack from scratch, which a profile of
// a 64-member publication showed costing more CPU than the tasks' system
// calls. For starts at most workers goroutines, each taking the next task
// until none is left, and starts them one after the other, so that quick
// tasks wake few.
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
//
// The caller is one of the workers, and the others start one after the
// other: each, once running, starts the next while tasks are left. Tasks
// that take a few microseconds (a cached manifest's stat) are then done
// by the caller and a helper or two, not by workers goroutines woken for
// nothing; tasks that wait on the file system soon have every worker.
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
	var helpers atomic.Int32 // helpers started
	var wg sync.WaitGroup
	var help func()
	run := func() {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			fn(i)
		}
	}
	help = func() {
		if next.Load() < int64(n) && helpers.Add(1) <= int32(workers-1) {
			wg.Go(help)
		}
		run()
	}
	helpers.Add(1)
	wg.Go(help)
	run() // the caller is one of the workers
	wg.Wait()
}
