// Command kernelctl lists, validates, resolves and runs extkernel plugin
// packages.
//
// It is a thin layer over the public packages: it parses flags, calls the
// API, prints sorted output (human or --json) and maps errors to the exit
// codes documented in the README:
//
//	0   success
//	1   problems found (invalid manifests, unresolvable requirements, a plan
//	    whose build would fail) or the operation failed
//	2   plan and diff (only): there are changes that will apply
//	64  usage error (unknown command or flag, bad arguments)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/admin"
	// A config file may set validate_provider_input: kernelctl links the
	// validator in.
	_ "github.com/extkernel/extkernel/kernel/inputschema"
)

// Exit codes, documented in the README.
const (
	exitOK      = 0
	exitFailed  = 1
	exitChanges = 2
	exitUsage   = 64
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries an exit code out of a command. A nil Err means the
// command already printed what went wrong.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError marks an error as a usage error (exit 64).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// run executes kernelctl with args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with a context: cancelling it stops `kernelctl run` as
// SIGINT does.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &countingWriter{w: stdout}
	root := newRootCmd(out, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := reportError(cmd, err, stderr)
	if jsonRequested(root, args) && out.n == 0 {
		printErrorDocument(stdout, err, code)
	}
	return code
}

// jsonRequested reports whether --json was given: as parsed, or, when
// parsing the flags failed before it, as written among args.
func jsonRequested(root *cobra.Command, args []string) bool {
	if v, _ := root.PersistentFlags().GetBool("json"); v {
		return true
	}
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true":
			return true
		}
	}
	return false
}

// reportError prints err on stderr, with a pointer to the command's help
// for a usage error, and returns the exit code.
func reportError(cmd *cobra.Command, err error, stderr io.Writer) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "kernelctl: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "kernelctl: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		// Point at the help of the command that failed: a flag error in
		// `kernelctl run` is explained by `kernelctl run --help`.
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return exitUsage
	}
	return exitFailed
}

// Codes of the JSON error document beyond the admin API's (docs/cli.md).
const (
	codeUsage      = "usage"       // exit 64
	codeNotRunning = "not_running" // no kernel runs on the home
	codeFailed     = "failed"      // any other failure
)

// printErrorDocument prints the JSON error document of a command given
// --json that failed without printing one: {"error": {"code", "message",
// ...}}, shaped as the admin API's errors, whose fields (plugin,
// problems, ...) it carries when the kernel answered one.
func printErrorDocument(w io.Writer, err error, code int) {
	e := &admin.Error{Code: codeFailed}
	var (
		ae  *admin.Error
		nse *admin.NoServerError
	)
	switch {
	case code == exitUsage:
		e.Code = codeUsage
	case errors.As(err, &ae):
		c := *ae
		e = &c
	case errors.As(err, &nse):
		e.Code = codeNotRunning
	}
	e.Message = err.Error()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]*admin.Error{"error": e})
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
