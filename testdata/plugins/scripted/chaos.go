package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// stdout is the protocol stream: the SDK's frames and hostile lines are
// written whole, one at a time, so a hostile line is never spliced into a
// frame.
var stdout = &lockedWriter{f: os.Stdout}

type lockedWriter struct {
	mu sync.Mutex
	f  *os.File
}

func (w *lockedWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Write(b)
}

// serve is sdk.Plugin.Serve on the locked stdout.
func serve(p *sdk.Plugin) {
	os.Stdout = os.Stderr
	if err := p.ServeIO(context.Background(), os.Stdin, stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scripted: stopped on a protocol failure:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// chaos picks a behaviour at random: 85% modify, 8% slow then modify, 4%
// hang, 2% fail, 0.5% crash, 0.5% one of SCRIPT_FAULTS (else modify).
func chaos(ctx context.Context) string {
	switch n := rand.IntN(1000); {
	case n < 850:
		return "modify"
	case n < 930:
		select {
		case <-time.After(time.Duration(10+rand.IntN(70)) * time.Millisecond):
		case <-ctx.Done():
		}
		return "modify"
	case n < 970:
		return "hang"
	case n < 990:
		return "fail"
	case n < 995:
		return "crash"
	default:
		if faults := list("SCRIPT_FAULTS"); len(faults) > 0 {
			return faults[rand.IntN(len(faults))]
		}
		return "modify"
	}
}

// misbehave carries out a provider's or an action's behaviour: nil to
// answer normally, or the error to answer with. It may not return at all.
func misbehave(ctx context.Context, behaviour string) error {
	switch behaviour {
	case "fail":
		return &protocol.Error{Code: protocol.CodePluginError, Message: "failed on purpose"}
	case "crash":
		fmt.Fprintln(os.Stderr, "scripted: crashing on a call as told")
		os.Exit(7)
	}
	if behaviour != "chaos" {
		return nil
	}
	switch b := chaos(ctx); b {
	case "hang":
		<-ctx.Done()
		return ctx.Err()
	case "fail":
		return &protocol.Error{Code: protocol.CodePluginError, Message: "failed on purpose"}
	case "crash":
		os.Exit(7)
	case "hostile", "orphan":
		commit(b)
	}
	return nil
}

// commit commits one of SCRIPT_FAULTS and records it in SCRIPT_LOG.
func commit(fault string) {
	switch fault {
	case "hostile":
		kind, line := hostileLine()
		record("hostile " + kind)
		_, _ = stdout.Write(line)
	case "orphan":
		// A detached helper, as language servers start: its own session
		// (so its own process group), holding the plugin's stdio.
		cmd := exec.Command("sleep", "600")
		cmd.Stdout, cmd.Stderr = stdout.f, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "scripted: starting an orphan:", err)
			return
		}
		record(fmt.Sprintf("orphan %d", cmd.Process.Pid))
		if rand.IntN(2) == 0 {
			os.Exit(7)
		}
	}
}

// hostileLine returns one line the host must not accept, and its kind.
func hostileLine() (string, []byte) {
	switch rand.IntN(3) {
	case 0:
		return "garbage", []byte("this is not JSON\n")
	case 1:
		return "oversized", []byte(`{"jsonrpc":"2.0","method":"log","params":{"message":"` +
			strings.Repeat("x", wire.DefaultMaxFrame) + "\"}}\n")
	default:
		return "duplicate-id", []byte(`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}` + "\n")
	}
}

// record appends line to SCRIPT_LOG, if set, in one write.
func record(line string) {
	name := os.Getenv("SCRIPT_LOG")
	if name == "" {
		return
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scripted:", err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintln(os.Stderr, "scripted:", err)
	}
}
