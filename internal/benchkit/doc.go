// Package benchkit is the shared harness of the sidecar benchmarks
// (sidecar/bench_test.go) and of their hashicorp/go-plugin peer
// (bench/goplugin, a separate module): building the benchmark plugins,
// installing copies of them into a home, the hand-written floor client,
// and the latency and throughput reports. It is not part of extkernel's
// API and only benchmarks use it.
//
// The floor is what any client of a newline-JSON sidecar pays at least: an
// exec'd process with pipes on its stdin and stdout, a hand-written
// handshake (one initialize line out, one line in, decoded), and for calls
// a reader goroutine decoding responses into a map of pending ids to
// channels (JSONClient) or, with no JSON at all, a line written and a line
// read (Proc.Echo). It deliberately omits what the sidecar adds: process
// groups, stderr capture, a writer queue with write deadlines,
// heartbeats, deadlines and cancellation, declaration checks.
//
// # Lifecycle
//
// A Proc comes from Spawn (or StartFloors); its owner MUST Close it, which
// closes its stdin, waits for the process to exit and reaps it. A
// JSONClient owns its Proc and its reader goroutine: Close ends both.
//
// # Concurrency
//
// JSONClient.Call is safe for concurrent use; Proc.Echo and Handshake are
// not (one caller at a time).
//
// # Errors
//
// Errors answered by the plugin are *protocol.Error values; a plugin that
// exits or writes something unreadable fails every pending call with the
// read error.
package benchkit
