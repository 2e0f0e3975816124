package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/admin"
)

// logTimeFormat is the time of a logs line: local, to the millisecond.
const logTimeFormat = "2006-01-02T15:04:05.000Z07:00"

func newLogsCmd(g *globals) *cobra.Command {
	var req admin.LogsRequest
	cmd := &cobra.Command{
		Use:   "logs [PLUGIN]",
		Short: "Print the plugins' recent logs from the running kernel",
		Long: `Print the recent log lines the kernel running on the home keeps for each
plugin (its stderr and its log notifications, with their levels and fields;
the kernel's own lines are plugin "kernel"), oldest first: all plugins', or
PLUGIN's. --level keeps that level and above; --since keeps lines logged
within a duration (5m) or since an RFC 3339 time. With -f, keep printing new
lines until interrupted. --json prints one JSON object a line
(docs/admin.md). 'run' keeps the last 1000 lines of each plugin at
--keep-logs (default info) and above.`,
		Example: `  kernelctl logs --config kernel.json
  kernelctl logs audit -f --config kernel.json
  kernelctl logs --level warn --since 10m --json`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeMembers(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				req.Plugin = args[0]
			}
			if err := checkLogsRequest(req); err != nil {
				return err
			}
			return g.withKernel(cmd, req.Follow, func(ctx context.Context, c *admin.Client) error {
				err := c.Logs(ctx, req, func(l admin.LogLine) error {
					if g.json {
						return printLine(g, l)
					}
					_, err := fmt.Fprintln(g.stdout, logText(l))
					return err
				})
				if err != nil && ctx.Err() == nil {
					return adminFailure("logs", err)
				}
				return err
			})
		},
	}
	cmd.Flags().BoolVarP(&req.Follow, "follow", "f", false, "keep printing new lines")
	cmd.Flags().StringVar(&req.Level, "level", "", "only lines at this level and above: trace, debug, info, warn or error")
	cmd.Flags().StringVar(&req.Since, "since", "", "only lines logged within this duration (5m) or since this RFC 3339 time")
	return cmd
}

// checkLogsRequest checks --level and --since before asking.
func checkLogsRequest(req admin.LogsRequest) error {
	if l, ok := logLevels[strings.ToLower(req.Level)]; req.Level != "" && (!ok || l == logLevels["off"]) {
		return &usageError{fmt.Errorf("logs: --level %q is not trace, debug, info, warn or error", req.Level)}
	}
	if req.Since != "" {
		_, derr := time.ParseDuration(req.Since)
		_, terr := time.Parse(time.RFC3339Nano, req.Since)
		if derr != nil && terr != nil {
			return &usageError{fmt.Errorf("logs: --since %q is neither a duration (5m) nor an RFC 3339 time", req.Since)}
		}
	}
	return nil
}

// logText formats a line: time, plugin, level, message, fields as
// key=value in key order.
func logText(l admin.LogLine) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s", l.Time.Local().Format(logTimeFormat), l.Plugin, strings.ToUpper(l.Level), l.Message)
	for _, k := range slices.Sorted(maps.Keys(l.Fields)) {
		fmt.Fprintf(&b, " %s=%v", k, fieldText(l.Fields[k]))
	}
	return b.String()
}

// fieldText formats a field value: strings quoted when they hold spaces.
func fieldText(v any) string {
	switch x := v.(type) {
	case string:
		if strings.ContainsAny(x, " \t\n\"=") {
			return fmt.Sprintf("%q", x)
		}
		return x
	case map[string]any, []any:
		b, _ := jsonCompact(x)
		return b
	}
	return fmt.Sprint(v)
}
