package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/admin"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// adminTimeout bounds one request to a running kernel; a reload waits at
// most its startup budget (30s by default) and its lock.
const adminTimeout = 2 * time.Minute

// dialKernel connects to the admin API of the kernel running on the home,
// or says that none is running there (exit 1).
func (g *globals) dialKernel() (*admin.Client, error) {
	home, err := g.absHome()
	if err != nil {
		return nil, err
	}
	c, err := admin.Dial(adminSocket(home))
	var nse *admin.NoServerError
	if errors.As(err, &nse) {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("no kernel is running on home %s (%w)", home, nse)}
	}
	return c, err
}

// withKernel runs fn with a client of the running kernel and a context
// bounded by adminTimeout (follow: by SIGINT and SIGTERM instead).
func (g *globals) withKernel(cmd *cobra.Command, follow bool, fn func(ctx context.Context, c *admin.Client) error) error {
	c, err := g.dialKernel()
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(cmd.Context(), adminTimeout)
	if follow {
		ctx, cancel = signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	}
	defer cancel()
	err = fn(ctx, c)
	if follow && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil // interrupted: the way to end a follow
	}
	return err
}

// adminFailure maps an error answer to an exit 1 naming what failed; the
// *admin.Error stays in its chain (for the JSON error document).
func adminFailure(what string, err error) error {
	var e *admin.Error
	if !errors.As(err, &e) {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s: %w", what, err)}
	}
	msg := e.Message
	if e.PluginError != nil {
		msg = fmt.Sprintf("plugin %q failed: %s (code %d)", e.Plugin, e.PluginError.Message, e.PluginError.Code)
	}
	return &exitError{code: exitFailed, err: &answerError{msg: what + ": " + msg, answer: e}}
}

// answerError is an error answer of the admin API, told as kernelctl
// tells it.
type answerError struct {
	msg    string
	answer *admin.Error
}

func (e *answerError) Error() string { return e.msg }
func (e *answerError) Unwrap() error { return e.answer }

func newStatusCmd(g *globals) *cobra.Command {
	var verbose bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the running kernel's generation and plugins",
		Long: `Ask the kernel running on the home (through its admin socket,
<home>/run/admin.sock) for the process running it (pid, uptime, version,
config file), its current generation (number and age), each
plugin's manifest version, state (starting, ready, unresponsive, restarting, failed), pid,
uptime, restarts in the crash window and reason, and the generation's
warnings. When a running plugin is confined, a CONFINEMENT column shows the
confinement each one got: its mode, the mechanism enforcing it and how many
rules of its permissions this machine does not enforce; -v lists them.
Under "protocol and usage", each plugin's protocol version (with -v the
optional protocol features it uses) and its usage counters: how often it
used each optional feature and which protocol minors its handshakes
answered, since the kernel started.
Exit 1 when no kernel runs on the home.`,
		Example: `  kernelctl status --config kernel.json
  kernelctl status -v --config kernel.json
  kernelctl status --home ~/.extkernel --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withKernel(cmd, false, func(ctx context.Context, c *admin.Client) error {
				st, err := c.Status(ctx)
				if err != nil {
					return adminFailure("status", err)
				}
				if g.json {
					return g.printJSON(st)
				}
				writeStatus(g.stdout, st, verbose)
				return nil
			})
		},
	}
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "list the rules of each plugin's confinement not enforced, and the features each plugin uses")
	return cmd
}

// writeStatus prints a status answer as a table; verbose lists the rules
// of each plugin's confinement not enforced.
func writeStatus(w io.Writer, st *admin.StatusAnswer, verbose bool) {
	if line := kernelLine(st.Kernel); line != "" {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "generation %d, published %s ago\n", st.Generation.Number, humanSeconds(st.Generation.AgeSeconds))
	calls, confined := false, false
	for _, p := range st.Plugins {
		calls = calls || p.Calls != nil
		confined = confined || p.Confinement != nil && p.Confinement.Mode != pluginpkg.ConfineOff
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	head := "PLUGIN\tVERSION\tACTIVATION\tSTATE\tPID\tUPTIME\tRESTARTS"
	if calls {
		head += "\tCALLS\tERRORS\tP50\tP99"
	}
	if confined {
		head += "\tCONFINEMENT"
	}
	fmt.Fprintln(tw, head+"\tREASON")
	for _, p := range st.Plugins {
		pid, up := "-", "-"
		if p.PID != 0 {
			pid = fmt.Sprint(p.PID)
		}
		if p.UptimeSeconds != nil {
			up = humanSeconds(*p.UptimeSeconds)
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%d", p.Name, cmp.Or(p.Version, "-"), cmp.Or(p.Activation, "-"), p.State, pid, up, p.Restarts)
		if calls {
			row += "\t" + callColumns(p.Calls)
		}
		if confined {
			row += "\t" + confinementColumn(p.Confinement)
		}
		fmt.Fprintln(tw, row+"\t"+firstLine(p.Reason))
	}
	tw.Flush()
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		fmt.Fprintln(w, "  "+strings.TrimRight(line, " "))
	}
	if verbose {
		var rules []string
		for _, p := range st.Plugins {
			for _, r := range confinementOf(p).NotEnforced {
				rules = append(rules, p.Name+": "+r)
			}
		}
		list(w, "confinement not enforced", rules)
	}
	list(w, "lazy members", lazyLines(st.Plugins))
	list(w, "bakes", bakeLines(st.Plugins))
	list(w, "protocol and usage", usageLines(st.Plugins, verbose))
	list(w, plural(len(st.Warnings), "warning", "warnings"), st.Warnings)
}

// usageLines says, per plugin with a process or usage counters, the
// protocol version its process answered and its usage counters by key
// (docs/admin.md, "Usage"): "memory: protocol 1.4.0; calls 12, progress
// 3, protocol/1.4 1"; verbose adds the features it uses ("protocol
// 1.4.0, features calls, progress"). Sorted as the plugins are.
func usageLines(ps []admin.PluginStatus, verbose bool) []string {
	var out []string
	for _, p := range ps {
		if p.Protocol == "" && len(p.Usage) == 0 {
			continue
		}
		line := p.Name + ": protocol " + cmp.Or(p.Protocol, "-")
		if verbose && p.Protocol != "" {
			line += ", features " + cmp.Or(strings.Join(p.Features, ", "), "none")
		}
		var counts []string
		for _, k := range slices.Sorted(maps.Keys(p.Usage)) {
			counts = append(counts, fmt.Sprintf("%s %d", k, p.Usage[k]))
		}
		if len(counts) > 0 {
			line += "; " + strings.Join(counts, ", ")
		}
		out = append(out, line)
	}
	return out
}

// lazyLines says, per lazy member, where it stands: "search: declared
// from its manifest, never started" or "memory: activated by first call to
// provider plugin/memory/recall by host; start 12.3ms, first call 14.1ms;
// 2 starts, 1 idle stop; last used 4s ago". Sorted as the plugins are.
func lazyLines(ps []admin.PluginStatus) []string {
	var out []string
	for _, p := range ps {
		z := p.Lazy
		if z == nil {
			continue
		}
		if z.Activations == 0 {
			out = append(out, fmt.Sprintf("%s: declared from its %s, never started", p.Name, z.Declarations))
			continue
		}
		out = append(out, fmt.Sprintf("%s: activated by %s; start %gms (spawn %gms, handshake %gms), first call %gms; %s, %s; last used %s ago", p.Name,
			z.ActivatedBy, z.StartMS, z.SpawnMS, z.HandshakeMS, z.FirstCallMS, count(z.Activations, "start", "starts"), count(z.IdleStops, "idle stop", "idle stops"),
			humanSeconds(time.Since(z.LastUsed).Round(time.Second).Seconds())))
	}
	return out
}

// bakeLines says, per plugin whose bake the kernel watched, where it
// stands: "svc 2.0.0 (from 1.4.0): baking, 3m12s left; 120 calls, 2
// errors (at most 5% once 20 ended)" or "svc 2.0.0 (from 1.4.0): rolled
// back: crashed 4 times within 1m (budget 3): …". Sorted as the plugins
// are.
func bakeLines(ps []admin.PluginStatus) []string {
	var out []string
	for _, p := range ps {
		b := p.Bake
		if b == nil {
			continue
		}
		line := fmt.Sprintf("%s %s (from %s): %s", p.Name, b.Version, b.FromVersion, strings.ReplaceAll(b.State, "-", " "))
		if b.State == observe.BakeWatching {
			line += fmt.Sprintf(", %s left", humanSeconds(time.Until(b.Until).Round(time.Second).Seconds()))
		}
		line += fmt.Sprintf("; %s, %s", count(int(b.Calls), "call", "calls"), count(int(b.Errors), "error", "errors"))
		if b.MaxErrorRate > 0 {
			line += fmt.Sprintf(" (at most %g%% once %d ended)", b.MaxErrorRate*100, b.MinCalls)
		}
		if b.Reason != "" {
			line += ": " + b.Reason
		}
		out = append(out, line)
	}
	return out
}

// kernelLine describes the host process: "kernel pid 4242, up 5m3s,
// kernelctl v1.2.0, config /etc/extkernel/kernel.json" (version and
// config when the host set them), or "" when the answer has no pid (a
// server older than the field).
func kernelLine(k admin.KernelStatus) string {
	if k.PID == 0 {
		return ""
	}
	line := fmt.Sprintf("kernel pid %d, up %s", k.PID, humanSeconds(k.UptimeSeconds))
	if k.Version != "" {
		line += ", " + k.Version
	}
	if k.Config != "" {
		line += ", config " + k.Config
	}
	return line
}

// confinementOf is p's confinement, the zero value when none runs.
func confinementOf(p admin.PluginStatus) admin.Confinement {
	if p.Confinement == nil {
		return admin.Confinement{}
	}
	return *p.Confinement
}

// confinementColumn says how a running plugin is confined: "off",
// "best-effort: landlock ABI 7, seccomp, no_new_privs; 1 not enforced",
// or "-" when none runs.
func confinementColumn(c *admin.Confinement) string {
	switch {
	case c == nil:
		return "-"
	case c.Mode == pluginpkg.ConfineOff || c.Mechanism == "":
		return c.Mode
	case len(c.NotEnforced) == 0:
		return c.Mode + ": " + c.Mechanism
	}
	return fmt.Sprintf("%s: %s; %d not enforced", c.Mode, c.Mechanism, len(c.NotEnforced))
}

// callColumns formats a plugin's call counters, or dashes.
func callColumns(c *admin.CallStats) string {
	if c == nil {
		return "-\t-\t-\t-"
	}
	p50, p99 := "-", "-"
	if c.Latency != nil {
		p50, p99 = fmt.Sprintf("%gms", c.Latency.P50), fmt.Sprintf("%gms", c.Latency.P99)
	}
	return fmt.Sprintf("%d\t%d\t%s\t%s", c.Calls, c.Errors, p50, p99)
}

// humanSeconds formats seconds as a rounded duration: 850ms, 12s, 3m5s.
func humanSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func newRestartCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "restart PLUGIN",
		Short: "Restart one plugin of the running kernel",
		Long: `Restart one plugin of the kernel running on the home, whatever its state,
also one failed past its crash budget; it gets a fresh budget. Every other
plugin keeps running. Exit 1 when no kernel runs on the home, the plugin is
not a running member, or it fails to start again.`,
		Example: `  kernelctl restart memory --config kernel.json
  kernelctl restart memory --home ~/.extkernel --json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeMembers(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.withKernel(cmd, false, func(ctx context.Context, c *admin.Client) error {
				a, err := c.Restart(ctx, args[0])
				if err != nil {
					return adminFailure("restart "+args[0], err)
				}
				if g.json {
					return g.printJSON(a)
				}
				fmt.Fprintf(g.stdout, "restarted %s; generation %d serving\n", a.Plugin, a.Generation)
				return nil
			})
		},
	}
}

func newReloadCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "reload",
		Short: "Reload the running kernel",
		Long: `Make the kernel running on the home reload, as SIGHUP does: it applies
the plan (only added and reloaded packages start) and prints it, or rolls
back, the current generation serving throughout, and prints every problem.
The text is the one 'run' prints on SIGHUP, a rollback and its problems
on stderr; --json prints the admin API's answer (docs/admin.md). Exit 1
when no kernel runs on the home or the reload rolled back.`,
		Example: `  kernelctl reload --config kernel.json
  kernelctl reload --home ~/.extkernel --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withKernel(cmd, false, func(ctx context.Context, c *admin.Client) error {
				a, err := c.Reload(ctx)
				var e *admin.Error
				switch {
				case errors.As(err, &e) && e.Code == admin.CodeReloadRolledBack:
					if g.json {
						g.printJSON(map[string]*admin.Error{"error": e})
					} else {
						fmt.Fprint(g.stderr, reloadText(reloadOutcome{rollback: e}))
					}
					return failed
				case err != nil:
					return adminFailure("reload", err)
				case g.json:
					return g.printJSON(a)
				}
				fmt.Fprint(g.stdout, reloadText(reloadOutcome{applied: a}))
				return nil
			})
		},
	}
}

func newEventsCmd(g *globals) *cobra.Command {
	var req admin.EventsRequest
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the running kernel's events as NDJSON",
		Long: `Print the recent events of the kernel running on the home (the last 256:
start progress, state changes, crashes, restarts, published generations,
warnings, failed builds, plugins' notifications, audits), one JSON object a
line (docs/admin.md). --plugin keeps the events of that plugin, --type
those of that type (plugin, plugin-state, plugin-crashed,
generation-published, warning, build-failed, notify, audit); each may be
repeated or list names separated by commas. An unknown type is a usage
error, an unknown plugin exits 1 naming the closest one. With -f, keep
printing new events until interrupted.`,
		Example: `  kernelctl events --config kernel.json
  kernelctl events -f --home ~/.extkernel
  kernelctl events --plugin memory --type plugin-state,plugin-crashed -f`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withKernel(cmd, req.Follow, func(ctx context.Context, c *admin.Client) error {
				err := c.Events(ctx, req, func(e admin.EventLine) error { return printLine(g, e) })
				var e *admin.Error
				switch {
				case err == nil || ctx.Err() != nil:
					return err
				case errors.As(err, &e) && e.Code == admin.CodeBadRequest:
					return &usageError{fmt.Errorf("events: %s", e.Message)}
				}
				return adminFailure("events", err)
			})
		},
	}
	cmd.Flags().BoolVarP(&req.Follow, "follow", "f", false, "keep printing new events")
	cmd.Flags().StringSliceVar(&req.Plugins, "plugin", nil, "only the events of this plugin (repeatable)")
	cmd.Flags().StringSliceVar(&req.Types, "type", nil, "only the events of this type (repeatable)")
	return cmd
}

// printLine prints v as one compact JSON line.
func printLine(g *globals, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = g.stdout.Write(append(b, '\n'))
	return err
}

// count is n with its noun: "1 start", "2 starts".
func count(n int, one, many string) string { return fmt.Sprintf("%d %s", n, plural(n, one, many)) }
