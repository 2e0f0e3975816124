//go:build unix

package kernel

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

// TestHeartbeatUnresponsiveThenKilled freezes a plugin with SIGSTOP: it
// turns unresponsive, recovers on SIGCONT, and is killed and restarted
// when stopped past the hang timeout.
func TestHeartbeatUnresponsiveThenKilled(t *testing.T) {
	cfg := testConfig(writeHome(t, plug{name: "frozen"}))
	cfg.Supervision = config.Supervision{HeartbeatInterval: 50 * time.Millisecond, HeartbeatTimeout: 100 * time.Millisecond,
		HangTimeout: 2 * time.Second, CrashBudget: 3, CrashWindow: time.Minute, BackoffMin: time.Millisecond}
	k := startKernel(t, cfg)
	states := watchStates(t, k, "frozen")
	pid := clientNamed(k, "frozen").PID()

	// A stopped process answers no ping: unresponsive; continued, it
	// answers again: ready.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	states.expect(t, observe.StateUnresponsive)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	states.expect(t, observe.StateReady)

	// Stopped past the hang timeout: killed and restarted.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	states.expect(t, observe.StateUnresponsive)
	e := states.expect(t, observe.StateRestarting)
	if !strings.Contains(e.Message, sidecar.ErrUnresponsive.Error()) {
		t.Errorf("restart reason = %q, want it to name %q", e.Message, sidecar.ErrUnresponsive)
	}
	states.expect(t, observe.StateStarting, observe.StateReady)
	if clientNamed(k, "frozen").PID() == pid {
		t.Error("the hung process was not replaced")
	}
}
