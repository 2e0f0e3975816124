package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/extkernel/extkernel/admin"
	"github.com/extkernel/extkernel/internal/ident"
)

// maxCallInput bounds the JSON input `call` reads from stdin: the admin
// API's request limit.
const maxCallInput = 1 << 20

var callKinds = []string{admin.KindProvider, admin.KindAction, admin.KindStrategy, admin.KindIntercept}

func newCallCmd(g *globals) *cobra.Command {
	var once bool
	cmd := &cobra.Command{
		Use:   "call KIND TARGET [JSON]",
		Short: "Call a provider, action, strategy, interception point or host kind",
		Long: `Call a contribution of the kernel running on the home: KIND is provider
(TARGET its ID, plugin/<name>/<ref>), action (its ID; JSON is the UI
context), strategy (the slot), intercept (the point; JSON is the
payload), or a kind the host declares (TARGET the contribution's key;
each plugin's answer is printed under its name). 'kernelctl describe'
lists what can be called, with input schemas. JSON is the argument, else standard input when it is not a
terminal; none is null. Prints what the plugin returned (for intercept, the
payload after every interceptor, then each step; for strategy, the owner or
that the host default applies); --json prints the admin API's answer
(docs/admin.md). Exit 1 on a plugin's error, shown with its message, also
when an optional plugin failed and was skipped.

With --once, no kernel need be running: call takes the home's run lock,
starts the generation, calls, and stops it.`,
		Example: `  kernelctl call provider plugin/kvstore/put '{"key": "k", "value": 1}' --config kernel.json
  echo '"k"' | kernelctl call provider plugin/kvstore/get --config kernel.json
  kernelctl call intercept tool.before '{"cmd": "ls"}' --json
  kernelctl call strategy context.compactor '[1, 2, 3, 4]' --once --config kernel.json`,
		Args:              cobra.RangeArgs(2, 3),
		ValidArgsFunction: completeCall(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := callRequest(cmd, args)
			if err != nil {
				return err
			}
			if once {
				return callOnce(cmd, g, req)
			}
			return g.withKernel(cmd, false, func(ctx context.Context, c *admin.Client) error {
				return printCall(g, c, ctx, req)
			})
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "start the generation for this call and stop it after")
	return cmd
}

// callRequest builds the request from the arguments and stdin.
func callRequest(cmd *cobra.Command, args []string) (admin.CallRequest, error) {
	req := admin.CallRequest{Kind: args[0], Target: args[1]}
	if !slices.Contains(callKinds, req.Kind) && ident.ValidateDotted("kind", req.Kind) != nil {
		return req, &usageError{fmt.Errorf("call: KIND %q is not %s or a host kind", req.Kind, strings.Join(callKinds, ", "))}
	}
	var input []byte
	if len(args) == 3 {
		input = []byte(args[2])
	} else if in := cmd.InOrStdin(); !isTerminal(in) {
		data, err := io.ReadAll(io.LimitReader(in, maxCallInput+1))
		if err != nil {
			return req, fmt.Errorf("call: reading the input: %w", err)
		}
		if len(data) > maxCallInput {
			return req, &usageError{fmt.Errorf("call: the input on stdin is larger than %d bytes", maxCallInput)}
		}
		input = data
	}
	if len(bytes.TrimSpace(input)) == 0 {
		return req, nil
	}
	if !json.Valid(input) {
		return req, &usageError{fmt.Errorf("call: the input is not valid JSON: %.80s", input)}
	}
	req.Input = json.RawMessage(input)
	return req, nil
}

// isTerminal reports whether r is a terminal.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printCall makes the call and prints its answer.
func printCall(g *globals, c *admin.Client, ctx context.Context, req admin.CallRequest) error {
	what := fmt.Sprintf("call %s %s", req.Kind, req.Target)
	a, err := c.Call(ctx, req)
	if err != nil {
		var e *admin.Error
		if g.json && errors.As(err, &e) {
			g.printJSON(map[string]*admin.Error{"error": e})
		}
		return adminFailure(what, err)
	}
	if g.json {
		if err := g.printJSON(a); err != nil {
			return err
		}
	} else {
		writeCall(g, a)
	}
	if a.Failed() {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s: a plugin failed and was skipped", what)}
	}
	return nil
}

// writeCall prints the returned value, then what the kind adds.
func writeCall(g *globals, a *admin.CallAnswer) {
	w := g.stdout
	switch a.Kind {
	case admin.KindIntercept:
		fmt.Fprintln(w, jsonIndent(a.Payload))
		if a.Denied {
			fmt.Fprintf(w, "denied by %s: %s\n", a.DeniedBy, a.Reason)
		}
		for _, s := range a.Steps {
			line := fmt.Sprintf("step %s: %s", s.Plugin, s.Decision)
			if s.Reason != "" {
				line += " (" + s.Reason + ")"
			}
			if s.Error != "" {
				line += ": " + s.Error
			}
			fmt.Fprintln(w, line)
		}
	case admin.KindStrategy:
		if a.HostDefault {
			if a.Error != "" {
				fmt.Fprintf(w, "host default applies: %s\n", a.Error)
			} else {
				fmt.Fprintln(w, "host default applies: no plugin owns the slot")
			}
			return
		}
		fmt.Fprintln(w, jsonIndent(a.Output))
		fmt.Fprintf(w, "owner %s\n", a.Owner)
	default:
		if len(a.Answers) == 0 {
			fmt.Fprintln(w, jsonIndent(a.Output))
		}
		for _, ans := range a.Answers { // a host kind: each contribution's answer
			if ans.Error != "" {
				fmt.Fprintf(w, "%s failed (skipped): %s\n", ans.Plugin, ans.Error)
				continue
			}
			fmt.Fprintf(w, "%s: %s\n", ans.Plugin, jsonIndent(ans.Output))
		}
	}
}

// jsonIndent indents raw JSON; nothing is null.
func jsonIndent(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// jsonCompact encodes v compactly.
func jsonCompact(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// callOnce starts the generation under the home's run lock, serves it on
// the home's admin socket for this one call (so that the call and its
// output are those of a running kernel), and stops it.
func callOnce(cmd *cobra.Command, g *globals, req admin.CallRequest) error {
	ctx := cmd.Context()
	k, cfg, warnings, err := newKernel(g, nil)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintf(g.stderr, "kernelctl: warning: %s\n", w)
	}
	if err := checkHome(cfg.Home); err != nil {
		k.Close(ctx)
		return err
	}
	lock, err := lockRun(g, cfg.Home)
	if err != nil {
		k.Close(ctx)
		return err
	}
	defer lock.Unlock()
	srv := admin.NewServer(k, admin.Options{Version: "kernelctl " + buildVersion().Kernelctl, Redact: cfg.Redactor()})
	stop := func(cause error) error {
		ctx, cancel := context.WithTimeout(context.Background(), closeBudget)
		defer cancel()
		err := errors.Join(srv.Close(ctx), k.Close(ctx))
		if err != nil {
			return errors.Join(cause, &exitError{code: exitFailed, err: err})
		}
		return cause
	}
	if err := k.Start(ctx); err != nil {
		return stop(&exitError{code: exitFailed, err: err})
	}
	ln, err := admin.Listen(adminSocket(cfg.Home))
	if err != nil {
		return stop(&exitError{code: exitFailed, err: err})
	}
	if ln.Note != "" {
		fmt.Fprintf(g.stderr, "kernelctl: %s\n", ln.Note)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(ln)
	}()
	defer func() { <-served }()
	c, err := admin.Dial(ln.Path)
	if err != nil {
		return stop(err)
	}
	defer c.Close()
	callCtx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	return stop(printCall(g, c, callCtx, req))
}
