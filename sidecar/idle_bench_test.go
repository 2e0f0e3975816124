//go:build unix

package sidecar

import (
	"context"
	"runtime"
	"testing"
)

// idleClients is how many idle clients BenchmarkIdleClient holds at once.
const idleClients = 64

// BenchmarkIdleClient measures what an idle running sidecar costs the
// host: each iteration starts 64 clients of the floor plugin (heartbeats
// on, the defaults a host runs with), lets them idle, and reports per
// client the goroutines (runtime.NumGoroutine) and the heap and stack
// bytes in use (runtime.ReadMemStats after a GC) over what the host held
// before the first start; then it closes them, with the timer stopped.
// Run it with a fixed count: -benchtime 5x.
func BenchmarkIdleClient(b *testing.B) {
	floor, _ := benchBinaries(b)
	pkgs := benchPackages(b, floor, idleClients)
	var goroutines, heap, stack float64
	for range b.N {
		b.StopTimer()
		g0, m0 := idleSample()
		b.StartTimer()
		clients := make([]*Client, 0, idleClients)
		for _, pkg := range pkgs {
			ctx, cancel := context.WithTimeout(context.Background(), within)
			c, err := Start(ctx, pkg, benchOptions())
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			clients = append(clients, c)
		}
		b.StopTimer()
		g1, m1 := idleSample()
		goroutines += float64(g1-g0) / idleClients
		heap += float64(int64(m1.HeapInuse)-int64(m0.HeapInuse)) / idleClients
		stack += float64(int64(m1.StackInuse)-int64(m0.StackInuse)) / idleClients
		for _, c := range clients {
			ctx, cancel := context.WithTimeout(context.Background(), within)
			if err := c.Close(ctx); err != nil {
				b.Error(err)
			}
			cancel()
		}
		b.StartTimer()
	}
	b.ReportMetric(goroutines/float64(b.N), "goroutines/client")
	b.ReportMetric(heap/float64(b.N), "heap-B/client")
	b.ReportMetric(stack/float64(b.N), "stack-B/client")
}

// idleSample returns the number of goroutines and the memory statistics
// after two collections (the second frees what the first's finalizers
// released).
func idleSample() (int, runtime.MemStats) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), m
}
