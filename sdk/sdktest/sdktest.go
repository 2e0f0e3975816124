package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/process"
	"github.com/extkernel/extkernel/pluginpkg"
)

// Status is the outcome of one case.
type Status string

// The outcomes of a case. Only Fail makes a report fail.
const (
	// Pass: the plugin does what protocol.md says.
	Pass Status = "pass"
	// Warn: the plugin breaks a SHOULD of protocol.md; the host copes.
	Warn Status = "warn"
	// Fail: the plugin breaks a MUST of protocol.md; the host stops it, or
	// a call to it fails.
	Fail Status = "fail"
	// Skip: the case did not run, because an earlier case failed in a way
	// that makes it meaningless, or because it does not apply; Reason says
	// which.
	Skip Status = "skip"
)

// Case is the result of one named check.
type Case struct {
	// Name is the case's name, as docs/conformance.md lists it, e.g.
	// "handshake" or "call/provider/echo".
	Name string `json:"name"`
	// Status is its outcome.
	Status Status `json:"status"`
	// Reason says what was seen, and for Warn and Fail which rule of
	// protocol.md it breaks (with its section).
	Reason string `json:"reason"`
}

// Report is the outcome of one run of the suite on a package.
type Report struct {
	// Dir is the absolute package directory.
	Dir string `json:"dir"`
	// Plugin and Version are the manifest's name and version; empty when
	// the manifest could not be read.
	Plugin  string `json:"plugin"`
	Version string `json:"version"`
	// Cases are the results in the documented order (docs/conformance.md),
	// which does not depend on timing: the fixed cases, with one
	// call/<kind>/<id> case per declaration in place of "calls", kinds in
	// the order intercept, strategy, provider, action and IDs sorted.
	Cases []Case `json:"cases"`
	// Confinement says how the plugin ran: "off", or the mode and what
	// enforces it on this machine ("best-effort: landlock ABI 7, seccomp,
	// no_new_privs"), with what is not enforced.
	Confinement string `json:"confinement"`
	// Denials lists, sorted, what the confined plugin was denied over the
	// run, as its stderr and its error answers show it, each checked
	// against its effective permissions ("denied: read /x (not in
	// permissions.fs.read)"); at most 16. A failed case's reason ends with
	// them too.
	Denials []string `json:"denials,omitempty"`
}

// Failed reports whether any case failed.
func (r Report) Failed() bool {
	return slices.ContainsFunc(r.Cases, func(c Case) bool { return c.Status == Fail })
}

// Options adjust how the suite starts and talks to the plugin. The zero
// value starts it as the kernel would with no host config.
type Options struct {
	// Config is the plugin's configuration, sent in initialize as a host
	// config's plugin_config entry would be; nil sends none.
	Config json.RawMessage
	// Env holds extra environment variables for the plugin, as a host
	// config's plugin_env gives them (over the manifest's env, under the
	// kernel's EXTKERNEL_* variables).
	Env map[string]string
	// DataDir is the plugin's data directory, created if missing, as the
	// kernel creates <data_root>/<name>. Empty means a new temporary
	// directory, removed when Run returns.
	DataDir string
	// HandshakeTimeout bounds the answer to initialize. Zero means what
	// the kernel uses: the manifest's runtime.handshake_timeout, else 10 s;
	// neither may exceed 60 s.
	HandshakeTimeout time.Duration
	// CallTimeout bounds each call before the suite cancels it with
	// $/cancel, as the host does at a call's deadline. Zero means 2 s,
	// shorter than the host's deadlines (5 s for intercept, 30 s for the
	// others) so that the suite is quick: a call still running then is
	// only a warning, never a failure.
	CallTimeout time.Duration
	// Confinement confines the plugin as the host's config would
	// (docs/security.md, "Confinement"): its Mode ("" is off), and the
	// grants and denies over the manifest's permissions. Under "require",
	// a rule this machine cannot enforce fails the handshake case and
	// nothing starts. The plugin's ${tmp} is a directory of the run.
	Confinement pluginpkg.Confinement
	// Session is the session context sent in initialize, as a host
	// config's session; its "workspace" is the permissions' ${workspace}.
	Session map[string]string
	// Inputs gives the input each declaration is called with, keyed by
	// "<kind>/<id>" as its case is named without "call/":
	// "provider/echo", "intercept/tool.before", "tool/search.web" (a
	// contribution of host kind tool). A declaration without an entry
	// is called with the first example it declares (a provider's
	// schema.examples; a contribution's data.examples, or those of its
	// data's input_schema or schema), else null. An entry naming no
	// declaration is a warning of the declarations case. kernelctl
	// conformance --inputs FILE reads it from a JSON object.
	Inputs map[string]json.RawMessage
}

// defaultCallTimeout is Options.CallTimeout's zero value.
const defaultCallTimeout = 2 * time.Second

// Run starts the plugin of the package directory dir as the kernel would
// and runs every case on it (docs/conformance.md), in two starts of the
// plugin: the second one only receives malformed frames. Every wait is
// bounded, and Run returns once every process it started was killed and
// reaped.
//
// The error is not about the plugin: dir is not a directory, the data
// or temporary directory cannot be created, Options.Confinement's mode is
// unknown, plugins cannot run on this system (an
// error wrapping errors.ErrUnsupported, on Windows), or ctx ended (then
// ctx's error, with the cases finished so far). A plugin that cannot even
// start is a failed case, not an error.
func Run(ctx context.Context, dir string, opts Options) (Report, error) {
	if err := process.Supported(); err != nil {
		return Report{}, fmt.Errorf("conformance: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Report{}, fmt.Errorf("conformance: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil {
		return Report{}, fmt.Errorf("conformance: %w", err)
	} else if !fi.IsDir() {
		return Report{}, fmt.Errorf("conformance: %s is not a package directory", dir)
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = defaultCallTimeout
	}
	r := &runner{ctx: ctx, opts: opts, rep: Report{Dir: abs}}
	if r.dataDir = opts.DataDir; r.dataDir == "" {
		if r.dataDir, err = os.MkdirTemp("", "sdktest-data-"); err != nil {
			return Report{}, fmt.Errorf("conformance: data directory: %w", err)
		}
		defer os.RemoveAll(r.dataDir)
	} else if err := os.MkdirAll(r.dataDir, 0o700); err != nil {
		return Report{}, fmt.Errorf("conformance: data directory: %w", err)
	}
	err = r.run()
	return r.report(), err
}

// Check runs the suite on dir with t's context and reports to t: every
// failed case with t.Errorf, every warning and skipped case with t.Logf. An
// error of Run stops the test (t.Fatal). It returns the report.
func Check(t testing.TB, dir string, opts Options) Report {
	t.Helper()
	rep, err := Run(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Cases {
		switch c.Status {
		case Fail:
			t.Errorf("conformance %s: FAIL: %s", c.Name, c.Reason)
		case Warn, Skip:
			t.Logf("conformance %s: %s: %s", c.Name, strings.ToUpper(string(c.Status)), c.Reason)
		}
	}
	return rep
}
