//go:build linux

package confine

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Start runs start, which forks and execs the plugin (exec.Cmd.Start), on
// an OS thread of its own that it first confines to p; the thread is
// discarded after, never returned to the Go scheduler. Landlock domains,
// seccomp filters, no_new_privs and capabilities are per thread, and a
// child inherits those of the thread that forked it, so the plugin runs
// confined from its first instruction while no other thread of the host
// is touched. The Go runtime never clones a locked thread into a new one
// (it asks its template thread instead), so the confinement cannot leak
// into the host. (Go 1.28's SysProcAttr.UseLandlock does the Landlock part
// between fork and exec; this is the same effect without it.) A failure
// to apply p is an *Error, returned before start runs.
func Start(p *Policy, start func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := restrictThread(p); err != nil {
			errc <- &Error{Err: err}
			return
		}
		errc <- start()
	}()
	return <-errc
}

// restrictThread confines the calling thread to p: capabilities dropped
// when the host runs as root, no_new_privs, the Landlock ruleset and the
// seccomp filter, each applied as planned or failing.
func restrictThread(p *Policy) error {
	if abi := landlockABI(); abi < p.ABI {
		return fmt.Errorf("policy planned for Landlock ABI %d, this kernel has %d", p.ABI, abi)
	}
	if os.Geteuid() == 0 {
		if err := dropCapabilities(); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if p.ABI > 0 {
		if err := restrictLandlock(p); err != nil {
			return err
		}
	}
	if seccompSupported() {
		if err := loadFilter(p); err != nil {
			return err
		}
	}
	return nil
}

// restrictLandlock enforces p's Landlock ruleset on the calling thread.
func restrictLandlock(p *Policy) error {
	held := p.holdsSystem()
	rules, err := fsRules(p, held)
	if err != nil {
		return err
	}
	if p.ABI >= abiTCP { // before, TCP is not Landlock's, and a rule for it an error
		for _, port := range p.TCPConnect {
			rules = append(rules, landlock.ConnectTCP(port))
		}
	}
	if p.UDP && p.ABI >= abiUDP {
		rules = append(rules, landlock.BindUDP(0))
		for _, port := range p.UDPPorts {
			rules = append(rules, landlock.ConnectSendUDP(port))
		}
	}
	fd, flags, err := presets[p.ABI].NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if fd < 0 {
		return errors.New("landlock: the ruleset restricts nothing")
	}
	defer syscall.Close(fd)
	if held {
		if err := addSystemHeld(fd, presets[p.ABI].HandledAccessFS); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock: restrict: %w", err)
	}
	return nil
}
