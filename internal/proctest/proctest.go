// Package proctest helps tests prove that no process was left behind: it
// lists a process's children. It reads /proc, so it knows them on Linux
// only; elsewhere Children reports ok false and callers skip the check. It
// also measures the test process's own heap (SampleHeap, HeapAfterGC), for
// tests that hold the host's memory to a bound while plugins attack it.
package proctest

// Children returns the pids of the processes whose parent is ppid, zombies
// included (an unreaped child is a leak too), except the host's reaper
// (process.ReaperName), which lives as long as the host process. ok is
// false when the children cannot be listed (no /proc, or a system other
// than Linux), so callers can skip rather than pass vacuously.
func Children(ppid int) (pids []int, ok bool) { return children(ppid) }
