package sidecar

import (
	"errors"
	"fmt"
	"strings"

	"github.com/extkernel/extkernel/internal/pinexec"
)

// ErrClosed is returned by calls made on a Client after Close started, and
// is the Client's Err once Close has finished. Calls pending when Close
// starts fail with it too.
var ErrClosed = errors.New("sidecar: client closed")

// ErrProtocol is wrapped by every protocol violation a plugin commits: a
// line on stdout that is not a JSON-RPC message (together with the
// *wire.FrameError that quotes it), an oversized frame, or a request or
// notification sent before the handshake completed.
var ErrProtocol = errors.New("protocol error")

// ErrWedged is wrapped by the cause of a *CrashError when a write to the
// plugin's stdin blocked for longer than the write stall bound (5s): the
// plugin stopped reading its input and was stopped.
var ErrWedged = errors.New("plugin stopped reading its stdin")

// ErrUnresponsive is wrapped by the cause of a *CrashError when the plugin,
// pinged by the heartbeat, answered nothing for Options.HangTimeout and
// was stopped. (A ping unanswered for the shorter
// Options.HeartbeatTimeout only reports it unresponsive, to OnHealth.)
var ErrUnresponsive = errors.New("plugin stopped answering")

// errStdoutClosed is wrapped by the cause of a *CrashError when the plugin
// closed its stdout while still running.
var errStdoutClosed = errors.New("plugin closed its stdout")

// errHandshakeTimeout is wrapped (together with context.DeadlineExceeded)
// by a handshake StartError when the plugin did not answer initialize
// within its per-plugin handshake timeout.
var errHandshakeTimeout = errors.New("handshake timed out")

// Start phases, the values of StartError.Phase (documented there).
const (
	phaseSpawn        = "spawn"
	phaseVerify       = "verify"
	phaseConfine      = "confine"
	phaseLimits       = "limits"
	phaseVersion      = "version"
	phaseHandshake    = "handshake"
	phaseDeclarations = "declarations"
)

// StartError reports that Start failed. Whatever was started has been
// stopped when it is returned.
type StartError struct {
	// Plugin is the plugin's name.
	Plugin string
	// Phase says where Start failed, and what Err then is:
	//
	//   - "version": the manifest's kernel range rejects this host's
	//     protocol version (before anything is spawned), or the plugin
	//     answered an incompatible one: a *protocol.VersionError;
	//   - "spawn": the runtime could not be resolved or executed;
	//   - "verify": the executable could not be hashed, or the package is
	//     not what it was pinned to;
	//   - "confine": Options.Confinement could not be planned or
	//     applied: under "require", a rule this machine cannot enforce
	//     (the message names each), or the thread the plugin is forked
	//     from could not be confined (nothing started);
	//   - "limits": Options.Limits could not be applied to the started
	//     process (or are set on an OS other than Linux, before any
	//     process starts);
	//   - "handshake": initialize failed: the plugin exited (a
	//     *CrashError), timed out (context.DeadlineExceeded), answered
	//     with an error (a *protocol.Error) or broke the protocol
	//     (ErrProtocol);
	//   - "declarations": the plugin declared something its manifest does
	//     not authorize; the message lists every such declaration with
	//     its path in the initialize result.
	Phase string
	// Err is the cause.
	Err error
	// Stderr holds the last lines the plugin wrote to stderr, oldest first.
	Stderr []string
}

// Error returns `plugin "name": phase: cause`, followed by the last stderr
// lines when there are any.
func (e *StartError) Error() string {
	var ce *CrashError
	if errors.As(e.Err, &ce) { // it quotes stderr already
		return fmt.Sprintf("plugin %q: %s: %v", e.Plugin, e.Phase, e.Err)
	}
	var pe *pinexec.PinMismatchError
	if errors.As(e.Err, &pe) { // it names the plugin already
		return fmt.Sprintf("plugin %q: %s: %s", e.Plugin, e.Phase, pe.Detail())
	}
	return fmt.Sprintf("plugin %q: %s: %v%s", e.Plugin, e.Phase, e.Err, stderrSuffix(e.Stderr))
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// CrashError reports that a started plugin is gone: it exited, closed its
// stdout, broke the protocol, stopped reading stdin or stopped answering.
// Every call pending at that moment fails with it, later calls return it,
// and Options.OnCrash receives it once.
type CrashError struct {
	// Plugin is the plugin's name.
	Plugin string
	// ExitStatus is the process's final state as os.ProcessState reports
	// it, such as "exit status 2" or "signal: killed", or, if the host
	// could not learn it, "exit status unknown: " and the reason.
	ExitStatus string
	// Stderr holds the last lines the plugin wrote to stderr, oldest first.
	Stderr []string
	// Cause says why the host stopped the plugin (a protocol violation,
	// ErrWedged, ErrUnresponsive, a closed stdout); nil when the process
	// exited on its own.
	Cause error
}

// Error returns `plugin "name" exited unexpectedly (exit status 2)` or
// `plugin "name" was stopped (signal: killed): cause`, followed by the last
// stderr lines.
func (e *CrashError) Error() string {
	if e.Cause == nil {
		return fmt.Sprintf("plugin %q exited unexpectedly (%s)%s", e.Plugin, e.ExitStatus, stderrSuffix(e.Stderr))
	}
	return fmt.Sprintf("plugin %q was stopped (%s): %v%s", e.Plugin, e.ExitStatus, e.Cause, stderrSuffix(e.Stderr))
}

// Unwrap returns the cause.
func (e *CrashError) Unwrap() error { return e.Cause }

// declarationError lists every handshake declaration the manifest does
// not authorize, each prefixed with its path in the initialize result
// ("interceptors[0]: point ...").
type declarationError struct {
	manifest string // the manifest path used in messages
	problems []string
}

// Error returns every problem, separated by "; ".
func (e *declarationError) Error() string {
	return fmt.Sprintf("not authorized by %s: %s", e.manifest, strings.Join(e.problems, "; "))
}

// stderrTailInMessage bounds how many stderr lines an error message quotes;
// the error's Stderr field holds them all.
const stderrTailInMessage = 5

func stderrSuffix(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > stderrTailInMessage {
		lines = lines[len(lines)-stderrTailInMessage:]
	}
	return "; stderr: " + strings.Join(lines, " | ")
}
