package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/admin"
	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// closeBudget bounds how long `run` waits for in-flight calls when it stops.
// When it is spent, plugins are stopped regardless, each within the
// sidecar's own shutdown and kill graces (2s + 2s by default).
const closeBudget = 10 * time.Second

func newRunCmd(g *globals) *cobra.Command {
	var once bool
	var opts runOptions
	cmd := &cobra.Command{
		Use: "run",
		Example: `  kernelctl run --config kernel.json
  kernelctl run --config kernel.json --once --json
  kernelctl run --config kernel.json --log-level debug
  kernelctl run --config kernel.json --watch
  kernelctl run --config kernel.json --keep-logs debug`,
		Short: "Start a generation and keep it running",
		Long: `Start a runtime generation on the home: start every plugin of the closure,
showing each one's progress, then print the published generation's
contributions, members and warnings. Keep running, printing crashes and
warnings as they happen, until SIGINT or SIGTERM; then stop every plugin
(in-flight calls get 10s) and print "stopped". With --once, stop right after
printing. The exit code is 1 if the generation cannot be started: every
problem is printed and no plugin is left running. --json (with --once) prints
the generation as one JSON document (docs/cli.md); progress then goes to
stderr.

While it runs, it serves the admin API (docs/admin.md) on
<home>/run/admin.sock, which 'kernelctl status', 'reload', 'restart',
'call', 'logs' and 'events' use; a socket left there by a kernelctl that
was killed is removed, with a note. The admin API keeps each plugin's last
1000 log lines at --keep-logs (default info) and above, whatever
--log-level shows on stderr. With --watch, a change to the home's packages,
its state file or the config file reloads (once the changes pause for
300ms), printing what the reload did.

A plugin's notify prints "notify <plugin>: <event name>", at most
--notify-rate lines a second per plugin; the others are counted in a line
"notify <plugin>: N notifies not shown" once a second. What waits for a
stdout that is not read is bounded (--print-queue events, --print-queue-bytes,
notifies in half of each); more is dropped, and "N events dropped (stdout
was not read)" is printed once stdout takes writes again (docs/cli.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if g.json && !once {
				return &usageError{errors.New("run: --json needs --once")}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := opts.check(once); err != nil {
				return err
			}
			return runGeneration(ctx, stop, g, once, opts)
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "stop after printing the published generation")
	cmd.Flags().BoolVar(&opts.watch, "watch", false, "reload when the home's packages, state file or the config change")
	cmd.Flags().StringVar(&opts.keepLogs, "keep-logs", "info", "lowest level of the plugin logs the admin API keeps: trace, debug, info, warn or error")
	opts.print.addFlags(cmd)
	return cmd
}

// runOptions are the flags of `run` beyond --once.
type runOptions struct {
	watch    bool
	keepLogs string
	print    printerOptions
}

// check validates the flags.
func (o runOptions) check(once bool) error {
	if o.watch && once {
		return &usageError{errors.New("run: --watch and --once exclude each other")}
	}
	if l, ok := logLevels[strings.ToLower(o.keepLogs)]; !ok || l == hclog.Off {
		return &usageError{fmt.Errorf("run: --keep-logs %q is not a log level: want trace, debug, info, warn or error", o.keepLogs)}
	}
	if err := o.print.check(); err != nil {
		return &usageError{err}
	}
	return nil
}

// runGeneration starts a kernel, prints its first generation, waits for ctx
// (unless once), and closes the kernel. stopSignals restores the default
// signal handling once ctx is done, so that a second interrupt kills
// kernelctl.
func runGeneration(ctx context.Context, stopSignals func(), g *globals, once bool, opts runOptions) error {
	ring := admin.NewLogRing(admin.LogRingOptions{Root: loggerName, Level: logLevels[strings.ToLower(opts.keepLogs)]})
	k, cfg, warnings, err := newKernel(g, ring)
	if err != nil {
		return err
	}
	if err := checkHome(cfg.Home); err != nil {
		k.Close(ctx) // nothing started: Close only marks it closed
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
	p := newPrinter(progressOut, opts.print)
	for _, w := range warnings {
		p.print("warning: " + w + "\n")
	}
	k.Subscribe(p.event)
	var srv *admin.Server
	red := newRedaction(cfg)
	ctx, stopRequested := context.WithCancel(ctx)
	defer stopRequested()
	if !once {
		srv = newAdminServer(k, ring, p, red, g.absConfigPath(), func() {
			p.print("stop requested through the admin API\n")
			stopRequested()
		})
	}
	if err := k.Start(ctx); err != nil {
		return stopKernel(k, srv, p, err)
	}
	if err := writeSnapshots(cfg.Home, k.Current()); err != nil {
		p.print(fmt.Sprintf("warning: %v\n", err))
	}
	gen, routes := published(k)
	out := toRunOutput(cfg.Home, gen, routes)
	if g.json {
		if err := g.printJSON(out); err != nil {
			return stopKernel(k, srv, p, err)
		}
	} else {
		var b bytes.Buffer
		writeSummary(&b, out)
		p.print(b.String())
	}
	if once {
		p.print("\n")
		return stopKernel(k, srv, p, nil)
	}
	return keepRunning(ctx, stopSignals, g, k, srv, cfg, p, red, opts)
}

// published returns the published generation and its routes, read
// until both are of the same generation (a supervised restart may publish
// another in between).
func published(k *kernel.Kernel) (*generation.Generation, []capability.Route) {
	for {
		g := k.Current()
		n, routes := k.Routes()
		if g == nil || n == g.Number() {
			return g, routes
		}
	}
}

// keepRunning serves the admin API (and --watch) while the published
// generation runs, until ctx is done, then stops everything.
func keepRunning(ctx context.Context, stopSignals func(), g *globals, k *kernel.Kernel, srv *admin.Server, cfg config.Config,
	p *printer, red *redaction, opts runOptions) error {
	home := cfg.Home
	var w *watcher
	if opts.watch {
		// Watching starts before the admin socket answers: once a client
		// sees the kernel up, a change it makes is seen.
		var err error
		if w, err = newWatcher(home, g.configPath); err != nil {
			p.print(fmt.Sprintf("warning: --watch: %v\n", err))
		}
	}
	served := serveAdmin(g, srv, home, p)
	sd, err := newSDNotifier()
	if err != nil {
		p.print(fmt.Sprintf("warning: %v\n", err))
	}
	serve(ctx, k, home, p, w, sd, func(ctx context.Context, record func()) {
		if next, ok := reconfigure(ctx, g, k, cfg.Logger, p, record); ok {
			red.set(next)
		}
	})
	stopSignals()
	p.warn(sd.stopping())
	p.print("stopping\n")
	if w != nil {
		w.close()
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), closeBudget)
	defer cancel()
	srv.Close(closeCtx) // stopKernel reports its error; Serve returns now
	if err := <-served; err != nil {
		p.print(fmt.Sprintf("warning: admin API: %v\n", err))
	}
	return stopKernel(k, srv, p, nil)
}

// newAdminServer makes the admin server of run's kernel: it serves the log
// ring, redacts notify data with red, shows configPath in its status, a
// reload requested through it is printed as a SIGHUP one is, and a stop
// calls onStop. Made before Start, its event ring keeps the start's
// progress, and its start time is the kernel's.
func newAdminServer(k *kernel.Kernel, ring *admin.LogRing, p *printer, red *redaction, configPath string, onStop func()) *admin.Server {
	return admin.NewServer(k, admin.Options{Logs: ring, Version: "kernelctl " + buildVersion().Kernelctl, Redact: red.redact,
		ConfigPath: configPath, OnStop: onStop,
		OnReload: func(res *kernel.ReloadResult, err error) {
			p.print("reload requested through the admin API\n" + reloadText(reloadOutcomeOf(k, res, err)))
		}})
}

// serveAdmin serves the admin API on <home>/run/admin.sock until srv is
// closed; the returned channel receives Serve's error once it has
// returned. A socket that cannot be created is a warning: the kernel runs
// without it.
func serveAdmin(g *globals, srv *admin.Server, home string, p *printer) <-chan error {
	done := make(chan error, 1)
	ln, err := admin.Listen(adminSocket(home))
	if err != nil {
		done <- nil
		p.print(fmt.Sprintf("warning: no admin API: %v\n", err))
		return done
	}
	if ln.Note != "" {
		fmt.Fprintf(g.stderr, "kernelctl: %s\n", ln.Note)
	}
	go func() { done <- srv.Serve(ln) }()
	p.print(fmt.Sprintf("\nadmin API on %s (kernelctl status, logs -f, call; docs/admin.md)", ln.Path))
	return done
}

// serve waits for ctx, reloading on SIGHUP and when w (if not nil) reports
// a change, and recording every published generation (including
// supervised restarts and reloads through the admin API) as a snapshot.
// It tells the service manager (sd, when not nil) that the kernel is
// ready, and when a reload begins and ends.
func serve(ctx context.Context, k *kernel.Kernel, home string, p *printer, w *watcher, sd *sdNotifier, reconf func(context.Context, func())) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	published := make(chan struct{}, 1)
	unsub := k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventGenerationPublished {
			select {
			case published <- struct{}{}:
			default:
			}
		}
	})
	defer unsub()
	p.print("\nrunning; reload with SIGHUP, stop with Ctrl-C (SIGINT), SIGTERM or 'kernelctl stop'\n")
	var changed <-chan watchBatch
	if w != nil {
		changed = w.changes
	}
	recorded := k.Current().Number() // run recorded the first generation
	record := func() {
		if g := k.Current(); g != nil && g.Number() != recorded {
			recorded = g.Number()
			if err := writeSnapshots(home, g); err != nil {
				p.print(fmt.Sprintf("warning: %v\n", err))
			}
		}
	}
	p.warn(sd.ready(k.Current().Number()))
	reloading := func(do func()) {
		p.warn(sd.reloading())
		do()
		p.warn(sd.ready(k.Current().Number()))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			reloading(func() { reload(ctx, k, p, record) })
		case b := <-changed:
			if b.config {
				// A reload under the new config reads the home too.
				p.print("changed: the config file\n")
				reloading(func() { reconf(ctx, record) })
				continue
			}
			if len(b.home) > 0 {
				p.print(fmt.Sprintf("changed: %s\n", strings.Join(b.home, ", ")))
				reloading(func() { reload(ctx, k, p, record) })
			}
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
	if err == nil {
		record()
	}
	p.print(reloadText(reloadOutcomeOf(k, res, err)))
}

// reconfigure reads the --config file again and reloads under it
// (Kernel.Reconfigure), with kernelctl's logger and the host capabilities
// it implements for the new config; it prints the plan applied, or why the
// running generation keeps serving under the previous config. It returns
// the config and true when the kernel took it.
func reconfigure(ctx context.Context, g *globals, k *kernel.Kernel, log hclog.Logger, p *printer, record func()) (config.Config, bool) {
	next, warnings, err := kernelConfig(g, log)
	if err != nil {
		p.print(fmt.Sprintf("config not applied; generation %d keeps serving under the previous config:\n%s\n",
			k.Current().Number(), indentLines(err.Error(), "  ")))
		return next, false
	}
	for _, w := range warnings {
		p.print("warning: " + w + "\n")
	}
	p.print("reloading under the new config\n")
	res, err := k.Reconfigure(ctx, next)
	if err == nil {
		record()
	}
	p.print(reloadText(reloadOutcomeOf(k, res, err)))
	return next, err == nil
}

// reloadOutcome is a reload's result as the admin API answers it: the
// applied plan, or the rollback (an *admin.Error with every problem).
type reloadOutcome struct {
	applied  *admin.ReloadAnswer
	rollback *admin.Error
}

// reloadOutcomeOf converts Kernel.Reload's result.
func reloadOutcomeOf(k *kernel.Kernel, res *kernel.ReloadResult, err error) reloadOutcome {
	if err != nil {
		e := &admin.Error{Code: admin.CodeReloadRolledBack, Message: err.Error()}
		if g := k.Current(); g != nil {
			e.Generation = g.Number()
		}
		return reloadOutcome{rollback: e}
	}
	return reloadOutcome{applied: &admin.ReloadAnswer{Published: res.Published, Generation: res.Generation.Number(), Plan: res.Plan}}
}

// reloadText is what `run` (on SIGHUP, --watch or a reload through the
// admin API) and `kernelctl reload` print: the applied plan, or the
// rollback with every problem.
func reloadText(o reloadOutcome) string {
	var b bytes.Buffer
	switch {
	case o.rollback != nil:
		fmt.Fprintf(&b, "reload rolled back; generation %d keeps serving:\n%s\n", o.rollback.Generation, indentLines(o.rollback.Message, "  "))
	case !o.applied.Published:
		fmt.Fprintf(&b, "reload: no changes; generation %d keeps serving\n", o.applied.Generation)
	default:
		writePlan(&b, o.applied.Plan, "reload")
		fmt.Fprintf(&b, "reload applied; generation %d serving\n", o.applied.Generation)
	}
	return b.String()
}

// checkHome refuses a home that is not a directory: on a mistyped --home,
// run would start an empty generation, and make the home to lock it.
func checkHome(home string) error {
	fi, err := os.Stat(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &exitError{code: exitFailed, err: fmt.Errorf("home %s does not exist", absPath(home))}
	case err != nil:
		return &exitError{code: exitFailed, err: fmt.Errorf("home: %w", err)}
	case !fi.IsDir():
		return &exitError{code: exitFailed, err: fmt.Errorf("home %s is not a directory", absPath(home))}
	}
	return nil
}

// absPath is path made absolute, or path when that fails.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// lockRun takes the home's run lock for the kernel's lifetime: a second
// kernel on one home would start the same plugins on one state and data
// directory. Another holder is an exit 1 naming its pid, as is a run
// directory that is a symbolic link or another user's and writable by
// others; a run directory of this user's that others may write is made
// private, a lock left by a process that is gone is recovered, and an
// admin socket it left removed, each with a note on stderr.
func lockRun(g *globals, home string) (*pluginpkg.RunLock, error) {
	lock, err := pluginpkg.LockRun(home)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: err}
	}
	if note := lock.Note(); note != "" {
		fmt.Fprintf(g.stderr, "kernelctl: %s\n", note)
	}
	if pid := lock.StalePID(); pid != 0 {
		fmt.Fprintf(g.stderr, "kernelctl: recovered the run lock of home %s, left by pid %d which is gone\n", home, pid)
	}
	// Holding the run lock, no kernel serves the home: a socket in the run
	// directory was left by one that was killed.
	sock := adminSocket(absPath(home))
	if fi, err := os.Lstat(sock); err == nil && fi.Mode().Type() == fs.ModeSocket && os.Remove(sock) == nil {
		fmt.Fprintf(g.stderr, "kernelctl: removed the stale admin socket %s, left by a kernel that is gone\n", sock)
	}
	return lock, nil
}

// loggerName is the name of the logger kernelctl gives the kernel: the
// kernel's lines are named kernelctl.kernel, each plugin's
// kernelctl.<plugin>.
const loggerName = "kernelctl"

// newKernel builds the kernel from the flags and the config; plugin and
// kernel logs of the --log-level (default warn) and above go to stderr, and
// to ring (if not nil) at its own level. Its generations are numbered on
// from the last one recorded in the home. It serves the host capabilities
// of the config that kernelctl implements (hostHandlers), and returns a
// warning for each other one.
func newKernel(g *globals, ring *admin.LogRing) (k *kernel.Kernel, cfg config.Config, warnings []string, err error) {
	log := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: loggerName, Output: g.stderr, Level: g.level()})
	if ring != nil {
		log.RegisterSink(ring)
	}
	cfg, warnings, err = kernelConfig(g, log)
	if err != nil {
		return nil, cfg, nil, err
	}
	last, err := lastRecorded(cfg.Home)
	if err != nil {
		return nil, cfg, nil, err
	}
	cfg.FirstGeneration = last + 1
	k, err = kernel.New(cfg)
	return k, cfg, warnings, err
}

// kernelConfig reads the config as run applies it, at start and when
// --watch sees it change: the --config file with the home resolved,
// kernelctl's logger log, and handlers for the host capabilities kernelctl
// implements (with a warning for each declared one it does not), built
// from their capability_config (an error names what is wrong there).
func kernelConfig(g *globals, log hclog.Logger) (config.Config, []string, error) {
	cfg, err := g.configWithHome()
	if err != nil {
		return cfg, nil, err
	}
	cfg.Logger = log
	var warnings []string
	var problems []string
	cfg.Handlers, warnings, problems = hostHandlers(cfg, log)
	if len(problems) > 0 {
		return cfg, nil, &config.Error{Path: g.configPath, Problems: problems}
	}
	return cfg, warnings, nil
}

// stopKernel closes the admin server (if not nil), then k, within
// closeBudget, prints "stopped" unless cause says the command failed before
// (a failed Start: nothing ran), and returns cause joined with the Close
// errors as an exit 1.
func stopKernel(k *kernel.Kernel, srv *admin.Server, p *printer, cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), closeBudget)
	defer cancel()
	var err error
	if srv != nil {
		err = srv.Close(ctx)
	}
	err = errors.Join(err, k.Close(ctx))
	if cause == nil {
		p.print("stopped\n")
	}
	p.close()
	if cause == nil && err == nil {
		return nil
	}
	return &exitError{code: exitFailed, err: errors.Join(cause, err)}
}

// adminSocketName is the admin socket's name in the home's run directory.
const adminSocketName = "admin.sock"

// adminSocket is the path of the home's admin socket.
func adminSocket(home string) string {
	return filepath.Join(home, pluginpkg.RunDir, adminSocketName)
}
