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
//	2   plan and diff: there are changes that will apply; upgrade: the
//	    package changes
//	64  usage error (unknown command or flag, bad arguments)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
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
