package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/pluginpkg"
)

// closeBudget bounds how long `run` waits for in-flight calls when it stops.
// When it is spent, plugins are stopped regardless, each within the
// sidecar's own shutdown and kill graces (2s + 2s by default).
const closeBudget = 10 * time.Second

func newRunCmd(g *globals) *cobra.Command {
	var once bool
	cmd := &cobra.Command{
		Use: "run",
		Example: `  kernelctl run --config kernel.json
  kernelctl run --config kernel.json --once --json
  kernelctl run --config kernel.json --log-level debug`,
		Short: "Start a generation and keep it running",
		Long: `Start a runtime generation on the home: start every plugin of the closure,
showing each one's progress, then print the published generation's
contributions, members and warnings. Keep running, printing crashes and
warnings as they happen, until SIGINT or SIGTERM; then stop every plugin
(in-flight calls get 10s) and print "stopped". With --once, stop right after
printing. The exit code is 1 if the generation cannot be started: every
problem is printed and no plugin is left running. --json (with --once) prints
the generation as one JSON document (docs/cli.md); progress then goes to
stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.json && !once {
				return &usageError{errors.New("run: --json needs --once")}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runGeneration(ctx, stop, g, once)
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "stop after printing the published generation")
	return cmd
}

// runGeneration starts a kernel, prints its first generation, waits for ctx
// (unless once), and closes the kernel. stopSignals restores the default
// signal handling once ctx is done, so that a second interrupt kills
// kernelctl.
func runGeneration(ctx context.Context, stopSignals func(), g *globals, once bool) error {
	k, cfg, err := newKernel(g)
	if err != nil {
		return err
	}
	lock, err := lockRun(g, cfg.Home)
	if err != nil {
		k.Close(ctx) // nothing started: Close only marks it closed
		return err
	}
	defer lock.Unlock()
	progressOut := g.stdout
	if g.json {
		progressOut = g.stderr
	}
	p := newPrinter(progressOut)
	k.Subscribe(p.event)
	if err := k.Start(ctx); err != nil {
		return stopKernel(k, p, err)
	}
	if err := writeSnapshots(cfg.Home, k.Current()); err != nil {
		p.print(fmt.Sprintf("warning: %v\n", err))
	}
	out := toRunOutput(cfg.Home, k.Current())
	if g.json {
		if err := g.printJSON(out); err != nil {
			return stopKernel(k, p, err)
		}
	} else {
		var b bytes.Buffer
		writeSummary(&b, out)
		p.print(b.String())
	}
	if once {
		p.print("\n")
	} else {
		serve(ctx, k, cfg.Home, p)
		stopSignals()
		p.print("stopping\n")
	}
	return stopKernel(k, p, nil)
}

// serve waits for ctx, reloading on SIGHUP and recording every published
// generation (including supervised restarts) as a snapshot.
func serve(ctx context.Context, k *kernel.Kernel, home string, p *printer) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	published := make(chan struct{}, 1)
	unsub := k.Subscribe(func(e kernel.Event) {
		if e.Type == kernel.EventGenerationPublished {
			select {
			case published <- struct{}{}:
			default:
			}
		}
	})
	defer unsub()
	p.print("\nrunning; reload with SIGHUP, stop with Ctrl-C (SIGINT) or SIGTERM\n")
	recorded := k.Current().Number() // run recorded the first generation
	record := func() {
		if g := k.Current(); g != nil && g.Number() != recorded {
			recorded = g.Number()
			if err := writeSnapshots(home, g); err != nil {
				p.print(fmt.Sprintf("warning: %v\n", err))
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			reload(ctx, k, p, record)
		case <-published:
			record()
		}
	}
}

// reload applies a reload, records its snapshot, and prints the applied
// plan, or the rollback with every problem.
func reload(ctx context.Context, k *kernel.Kernel, p *printer, record func()) {
	p.print("reloading\n")
	res, err := k.Reload(ctx)
	if err != nil {
		p.print(fmt.Sprintf("reload rolled back; generation %d keeps serving:\n%s\n", k.Current().Number(), indentLines(err.Error(), "  ")))
		return
	}
	record()
	var b bytes.Buffer
	if !res.Published {
		fmt.Fprintf(&b, "reload: no changes; generation %d keeps serving\n", res.Generation.Number())
	} else {
		writePlan(&b, res.Plan, "reload")
		fmt.Fprintf(&b, "reload applied; generation %d serving\n", res.Generation.Number())
	}
	p.print(b.String())
}

// lockRun takes the home's run lock for the kernel's lifetime: a second
// kernel on one home would start the same plugins on one state and data
// directory. Another holder is an exit 1 naming its pid; a lock left by a
// process that is gone is recovered, with a note on stderr.
func lockRun(g *globals, home string) (*pluginpkg.RunLock, error) {
	lock, err := pluginpkg.LockRun(home)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	if pid := lock.StalePID(); pid != 0 {
		fmt.Fprintf(g.stderr, "kernelctl: recovered the run lock of home %s, left by pid %d which is gone\n", home, pid)
	}
	return lock, nil
}

// newKernel builds the kernel from the flags and the config; plugin and
// kernel logs of the --log-level (default warn) and above go to stderr. Its generations are
// numbered on from the last one recorded in the home.
func newKernel(g *globals) (*kernel.Kernel, kernel.Config, error) {
	cfg, err := g.configWithHome()
	if err != nil {
		return nil, cfg, err
	}
	last, err := lastRecorded(cfg.Home)
	if err != nil {
		return nil, cfg, err
	}
	cfg.FirstGeneration = last + 1
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: "kernelctl", Output: g.stderr, Level: g.level()})
	k, err := kernel.New(cfg)
	return k, cfg, err
}

// stopKernel closes k within closeBudget, prints "stopped" unless cause
// says the command failed before (a failed Start: nothing ran), and
// returns cause joined with Close's error as an exit 1.
func stopKernel(k *kernel.Kernel, p *printer, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeBudget)
	defer cancel()
	err := k.Close(ctx)
	if cause == nil {
		p.print("stopped\n")
	}
	p.close()
	if cause == nil && err == nil {
		return nil
	}
	return &exitError{code: exitFailed, err: errors.Join(cause, err)}
}
