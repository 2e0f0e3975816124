package sidecar

import (
	"errors"
	"fmt"
	"strings"
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
// plugin's stdin blocked for longer than Options.WriteStall: the plugin
// stopped reading its input and was stopped.
var ErrWedged = errors.New("plugin stopped reading its stdin")

// ErrUnresponsive is wrapped by the cause of a *CrashError when the plugin,
// pinged by the heartbeat, answered nothing for Options.HangTimeout and
// was stopped. (A ping unanswered for the shorter
// Options.HeartbeatTimeout only reports the plugin Unresponsive.)
var ErrUnresponsive = errors.New("plugin stopped answering")

// ErrStdoutClosed is wrapped by the cause of a *CrashError when the plugin
// closed its stdout while still running.
var ErrStdoutClosed = errors.New("plugin closed its stdout")

// ErrHandshakeTimeout is wrapped (together with context.DeadlineExceeded) by
// a handshake StartError when the plugin did not answer initialize within
// its per-plugin handshake timeout.
var ErrHandshakeTimeout = errors.New("handshake timed out")

// Start phases, the values of StartError.Phase.
const (
	// PhaseSpawn: the runtime could not be resolved or executed.
	PhaseSpawn = "spawn"
	// PhaseVerify: the executable could not be hashed, or its sha256 is
	// not the package's pin. The error is then a *PinMismatchError.
	PhaseVerify = "verify"
	// PhaseLimits: Options.Limits could not be applied to the started
	// process (or are set on an OS other than Linux, before any process
	// starts).
	PhaseLimits = "limits"
	// PhaseVersion: the manifest's kernel constraint rejects this host's
	// protocol version, or the plugin answered an incompatible one. The
	// error is a *protocol.VersionError.
	PhaseVersion = "version"
	// PhaseHandshake: initialize failed (the plugin exited, timed out,
	// answered with an error or broke the protocol).
	PhaseHandshake = "handshake"
	// PhaseDeclarations: the plugin declared something its manifest does not
	// authorize. The error is a *DeclarationError.
	PhaseDeclarations = "declarations"
)

// StartError reports that Start failed. Whatever was started has been
// stopped when it is returned.
type StartError struct {
	Plugin string
	// Phase is one of PhaseSpawn, PhaseVerify, PhaseLimits, PhaseVersion,
	// PhaseHandshake, PhaseDeclarations.
	Phase string
	Err   error
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
	var pe *PinMismatchError
	if errors.As(e.Err, &pe) { // it names the plugin already
		return fmt.Sprintf("plugin %q: %s: %s", e.Plugin, e.Phase, pe.detail())
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
	Plugin string
	// ClientID is the ID of the Client whose process ended (Client.ID),
	// which tells a crash of the current process from a late report about
	// one already replaced.
	ClientID uint64
	// ExitStatus is the process's final state as os.ProcessState reports
	// it, such as "exit status 2" or "signal: killed", or, if the host
	// could not learn it, "exit status unknown: " and the reason.
	ExitStatus string
	// Stderr holds the last lines the plugin wrote to stderr, oldest first.
	Stderr []string
	// Cause says why the host stopped the plugin (a protocol violation,
	// ErrWedged, ErrUnresponsive, ErrStdoutClosed); nil when the process
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

// DeclarationError lists every handshake declaration the manifest does not
// authorize, each prefixed with its path in the initialize result
// ("interceptors[0]: point ...").
type DeclarationError struct {
	Plugin string
	// Manifest is the manifest path used in messages.
	Manifest string
	Problems []string
}

// Error returns every problem, separated by "; ".
func (e *DeclarationError) Error() string {
	return fmt.Sprintf("not authorized by %s: %s", e.Manifest, strings.Join(e.Problems, "; "))
}

// PinMismatchError reports that a pinned package is not what was pinned:
// Start refused to run it (a StartError in PhaseVerify).
type PinMismatchError struct {
	Plugin string
	// Path is the resolved executable (Plugin.Command resolved).
	Path string
	// Pinned is the plugin's pin (Plugin.Pin), Actual the same digest of
	// the package as it is now: for an executable pin the executable's
	// sha256 in lower-case hex, for a package pin the package pin it would
	// need.
	Pinned, Actual string
	// Changed says what differs from a package pin: "package files",
	// "interpreter /usr/bin/python3", or both joined by " and "; empty for
	// an executable pin.
	Changed string
}

// Error returns `plugin "x": executable /abs/bin/x has sha256 <actual>, but
// the package is pinned to <pinned>; re-pin it if the change is intended`,
// or for a package pin `plugin "x": package files and interpreter
// /usr/bin/python3 changed since the package was pinned (pinned <pinned>,
// now <actual>); re-pin it if the change is intended`.
func (e *PinMismatchError) Error() string {
	return fmt.Sprintf("plugin %q: %s", e.Plugin, e.detail())
}

func (e *PinMismatchError) detail() string {
	if e.Changed != "" {
		return fmt.Sprintf("%s changed since the package was pinned (pinned %s, now %s); re-pin it if the change is intended",
			e.Changed, e.Pinned, e.Actual)
	}
	return fmt.Sprintf("executable %s has sha256 %s, but the package is pinned to %s; re-pin it if the change is intended", e.Path, e.Actual, e.Pinned)
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
