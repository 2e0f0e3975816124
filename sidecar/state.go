package sidecar

// stage is where a Client is in its life. (Not to be confused with
// StartError.Phase, which says where Start failed.) It is kept in a state,
// under Client.mu, and changes only in state.transition, along these edges;
// every other move is refused:
//
//	           arm
//	starting ───────▶ running
//	    │                │
//	    └───────┬────────┘  up: the plugin is live, calls are sent
//	            │
//	            ├── close ──▶ closing ── finish ──▶ closed
//	            │
//	            ├── fault ──▶ faulted ── kill ──▶ killed
//	            │                │                  │
//	            │               exit               exit
//	            │                ▼                  │
//	            └── exit ───▶ exited ◀──────────────┘
//	                             │
//	                           finish
//	                             ▼
//	                          crashed
//
// and arm in faulted, killed or exited (the plugin went down while Start
// was still checking its handshake) keeps the stage and sets state.armed.
// As a list, by the stage moved from:
//
//	starting → running (arm), faulted (fault), exited (exit), closing (close)
//	running  → faulted (fault), exited (exit), closing (close)
//	faulted  → killed (kill), exited (exit); arm keeps faulted
//	killed   → exited (exit); arm keeps killed
//	exited   → crashed (finish); arm keeps exited
//	closing  → closed (finish)
//	crashed, closed: terminal, no move
//
// The moves, and who makes them: arm is Start's, once the handshake
// succeeded (Client.arm); fault is the first fault's (Client.fault); kill
// is the faulting goroutine's, when the plugin did not exit on its own;
// exit is the supervisor's, when it saw the process exit; close is Close's
// (or a failed Start's abort), when the plugin is still up; finish is the
// supervisor's, last, when it sets Err and closes Done.
//
// Refused moves are decisions too: a fault in faulted or killed, or while
// closing, or once terminal, is dropped (in exited it only records its
// cause, see Client.fault); a kill after the exit was seen is not sent;
// an exit while closing is Close's doing, not a crash (the stage stays
// closing); close once the plugin is down or terminal only waits for the
// teardown.
type stage uint8

const (
	// stageStarting: spawned, and Start's handshake runs. A crash now is
	// Start's to report (its *StartError), unless arm comes first.
	stageStarting stage = iota
	// stageRunning: Start succeeded (armed): a crash fires OnCrash.
	stageRunning
	// stageFaulted: a fault (a protocol error, a broken pipe, a stalled
	// write, the hang timeout) stops the plugin; life's cause is the
	// fault. Calls wait for the *CrashError.
	stageFaulted
	// stageKilled: the faulted plugin did not exit on its own and the host
	// killed it. The exit then reports the fault, even a closed pipe.
	stageKilled
	// stageExited: the supervisor saw the exit of a plugin Close was not
	// stopping and tears it down. Calls wait for the *CrashError.
	stageExited
	// stageClosing: Close (or a failed Start's abort) stops the plugin:
	// its end is not a crash. Life's cause is errClosing.
	stageClosing
	// stageCrashed: terminal; Err is the *CrashError.
	stageCrashed
	// stageClosed: terminal; Err is ErrClosed.
	stageClosed

	numStages = iota
)

var stageNames = [numStages]string{"starting", "running", "faulted", "killed", "exited", "closing", "crashed", "closed"}

func (s stage) String() string {
	if s < numStages {
		return stageNames[s]
	}
	return "stage(?)"
}

// up reports whether the plugin is live: calls are sent, Close stops it.
func (s stage) up() bool { return s == stageStarting || s == stageRunning }

// down reports whether the plugin exited or faulted and the client is
// torn down as crashed: calls wait for the *CrashError.
func (s stage) down() bool { return s == stageFaulted || s == stageKilled || s == stageExited }

// closing reports whether Close stops, or stopped, the plugin.
func (s stage) closing() bool { return s == stageClosing || s == stageClosed }

// terminal reports whether Err is set and Done closed.
func (s stage) terminal() bool { return s == stageCrashed || s == stageClosed }

// allows reports whether the graph drawn on stage has the move from s to
// next, an arm in a down stage included.
func (s stage) allows(next stage) bool {
	switch next {
	case stageRunning:
		return s == stageStarting || s.down()
	case stageFaulted, stageClosing:
		return s.up()
	case stageKilled:
		return s == stageFaulted
	case stageExited:
		return s.up() || s == stageFaulted || s == stageKilled
	case stageCrashed:
		return s == stageExited
	case stageClosed:
		return s == stageClosing
	}
	return false // nothing moves back to starting
}

// state is a Client's lifecycle: its stage, and what a stage must
// remember of the way to it. It lives in Client.mu and changes only in
// transition.
type state struct {
	stage stage
	// armed: Start succeeded, so a crash fires OnCrash (finish reads it).
	// Set by arm: with the move to running, or in a down stage.
	armed bool
}

// transition moves s to next if the graph drawn on stage allows it, and
// reports the stage s was in and whether it moved. A move to running (arm)
// sets armed; from a down stage the stage stays. A refused move leaves s
// as it is. The caller holds Client.mu: transition runs no I/O, sends on
// no channel and calls nothing else.
func (s *state) transition(next stage) (from stage, ok bool) {
	from = s.stage
	if !from.allows(next) {
		return from, false
	}
	if next == stageRunning {
		s.armed = true
		if from.down() {
			return from, true
		}
	}
	s.stage = next
	return from, true
}
