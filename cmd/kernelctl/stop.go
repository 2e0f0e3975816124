package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/admin"
	"github.com/extkernel/extkernel/pluginpkg"
)

const (
	// defaultStopTimeout is how long `stop` waits for the kernel to exit
	// by default: run's close budget (10s) and a plugin's shutdown and
	// kill graces (2s + 2s), with room to spare.
	defaultStopTimeout = 30 * time.Second
	// stopPollInterval is how often `stop` looks whether the run lock is
	// free while it waits.
	stopPollInterval = 20 * time.Millisecond
)

// stopOutput is what `stop --json` prints.
type stopOutput struct {
	Home    string `json:"home"`
	PID     int    `json:"pid"`
	Stopped bool   `json:"stopped"`
}

func newStopCmd(g *globals) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the kernel running on the home",
		Long: `Ask the kernel running on the home (a 'kernelctl run', through its admin
socket <home>/run/admin.sock, POST /v1/stop) to stop, as SIGTERM would: it
stops every plugin and exits. Then wait, at most --timeout (default 30s),
until it has released the home's run lock, that is until every plugin is
stopped and the home is free for another 'run'. Prints "stopped the kernel
on home H (pid N)". Exit 1 when no kernel runs on the home, or when it has
not stopped within --timeout (it may still be stopping its plugins).`,
		Example: `  kernelctl stop --config kernel.json
  kernelctl stop --home ~/.extkernel --timeout 1m --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if timeout <= 0 {
				return &usageError{fmt.Errorf("stop: --timeout %v is not positive", timeout)}
			}
			return g.stopRunning(cmd.Context(), timeout)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", defaultStopTimeout, "how long to wait for the kernel to exit")
	return cmd
}

// stopRunning asks the kernel running on the home to stop and waits, at
// most timeout, for it to release the home's run lock.
func (g *globals) stopRunning(ctx context.Context, timeout time.Duration) error {
	home, err := g.absHome()
	if err != nil {
		return err
	}
	c, err := g.dialKernel()
	if err != nil {
		return noAdminSocket(home, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a, err := c.Stop(ctx)
	var e *admin.Error
	switch {
	case errors.As(err, &e) && e.Code == admin.CodeClosed:
		a = &admin.StopAnswer{} // stopping already: wait for it as for ours
	case err != nil:
		return adminFailure("stop", err)
	}
	if err := waitRunLockFree(ctx, home); err != nil {
		if ctx.Err() != nil {
			return &exitError{code: exitFailed, err: fmt.Errorf("stop: the kernel on home %s%s has not stopped within %v (it may still be stopping its plugins)",
				home, pidSuffix(a.PID), timeout)}
		}
		return &exitError{code: exitFailed, err: fmt.Errorf("stop: %w", err)}
	}
	if g.json {
		return g.printJSON(stopOutput{Home: home, PID: a.PID, Stopped: true})
	}
	fmt.Fprintf(g.stdout, "stopped the kernel on home %s%s\n", home, pidSuffix(a.PID))
	return nil
}

// noAdminSocket is err, the failure to reach the admin socket, unless a
// kernel holds the home's run lock all the same: one that is starting,
// or runs with --once (run --once and call --once serve no stop), which
// `stop` cannot reach.
func noAdminSocket(home string, err error) error {
	path := runLockPath(home)
	if free, ferr := runLockFree(path); ferr != nil || free {
		return err
	}
	return &exitError{code: exitFailed, err: fmt.Errorf("stop: a kernel%s holds home %s but serves no admin socket (it is starting, or runs with --once): stop it with SIGTERM",
		pidSuffix(lockHolder(path)), home)}
}

// runLockPath is the path of the home's run lock (pluginpkg.LockRun).
func runLockPath(home string) string {
	return filepath.Join(home, pluginpkg.RunDir, "kernel.lock")
}

// lockHolder is the pid the run lock file at path records, 0 when none.
func lockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid < 0 {
		return 0
	}
	return pid
}

// pidSuffix is " (pid N)", or "" when pid is not known.
func pidSuffix(pid int) string {
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// absHome is the home as commands against a running kernel resolve it.
func (g *globals) absHome() (string, error) {
	cfg, err := g.configWithHome()
	if err != nil {
		return "", err
	}
	return filepath.Abs(cfg.Home)
}

// waitRunLockFree returns once no process holds the home's run lock
// (<home>/run/kernel.lock), or ctx's error. The kernel releases it after
// it has stopped every plugin, right before it exits.
func waitRunLockFree(ctx context.Context, home string) error {
	path := runLockPath(home)
	tick := time.NewTicker(stopPollInterval)
	defer tick.Stop()
	for {
		free, err := runLockFree(path)
		if err != nil || free {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
