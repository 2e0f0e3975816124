// Package process runs a plugin's process for package sidecar: the spawn
// (no shell, its own process group, stdio on pipes whose host ends are
// polled by the runtime), the exit watch, signals to the process group,
// reaping, resource limits, the search for processes that still hold the
// plugin's pipes, the host's reaper, the exec of a pinned executable
// through the descriptor that was hashed, and the direct write to stdin.
// It knows processes, never the protocol: sidecar.Client is its one user,
// as go-plugin's cmdrunner is go-plugin client's.
//
// # Lifecycle
//
// Start runs the executable; the caller then owns the *Process and:
//
//  1. MUST call Wait from exactly one goroutine: it returns once the
//     process exited and the leader was reaped, and closes Done;
//  2. MUST, once Done is closed, call Reap, which kills and reaps what is
//     left in the process group and withdraws the group from the reaper;
//  3. MUST close the host's pipe ends (Stdin, Stdout, Stderr).
//
// Discard does all three for a process that must not run (a pin check that
// failed after the exec); nothing else may use the Process then.
//
// # Platforms
//
// On Linux (without the build tag extkernel_portable) the pipes are made
// with pipe2(2), the host's ends alone polled; the exit is watched through
// a pidfd in the runtime's poller; SetLimits applies limits with
// prlimit(2); a pinned executable is exec'd through /proc/self/fd/N; the
// holders of a dead plugin's pipes are found through /proc/*/fd; and the
// host's reaper (see sidecar's documentation) kills registered process
// groups when the host dies. The direct write (DirectWriter) writes to the
// non-blocking stdin pipe from the caller's goroutine.
//
// On the other Unix systems (darwin, the BSDs), and on Linux built with
// -tags extkernel_portable (so CI runs the suite through these paths), the
// portable fallbacks apply: os.Pipe, cmd.Wait blocking in wait(2) on a
// thread, no resource limits (SetLimits fails with errors.ErrUnsupported),
// the executable exec'd by path, no search for pipe holders, no reaper, no
// direct write (every frame goes through the client's writer goroutine).
// Process groups, SIGTERM/SIGKILL to the group and reaping the group work
// as on Linux.
//
// On Windows, Start fails with an error wrapping errors.ErrUnsupported:
// a process tree would need a job object, which is not implemented.
//
// # Concurrency
//
// Wait runs on one goroutine; PID, Done, Terminate, Kill and ExitStatus
// (after Done) may be called from any. The reaper's state is one
// package-level value under its own lock, a leaf.
//
// # Errors
//
// Start returns the error of creating the pipes or of exec; Terminate and
// Kill return an error only when the signal could not be sent to a group
// that exists; SetLimits names the limit that failed.
package process
