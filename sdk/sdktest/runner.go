package sdktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/internal/confine"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// The fixed cases, in report order; the call/<kind>/<id> cases (or
// "calls" when the plugin declares nothing) take the place of "calls".
const (
	caseManifest     = "manifest"
	caseHandshake    = "handshake"
	caseDeclarations = "declarations"
	casePing         = "ping"
	caseCalls        = "calls"
	caseCancel       = "cancel"
	caseUnknown      = "unknown-method"
	caseMalformed    = "malformed"
	caseShutdown     = "shutdown"
	caseGroup        = "group"
	caseStdout       = "stdout"
	caseStderr       = "stderr"
)

// caseCallbacks (callback.go) comes after the call cases.

var caseOrder = []string{caseManifest, caseHandshake, caseDeclarations, casePing, caseCalls,
	caseCallbacks, caseCancel, caseStreams, caseUnknown, caseMalformed, caseShutdown, caseGroup, caseStdout, caseStderr}

// callPrefix starts the name of each declaration's call case.
const callPrefix = "call/"

// runner runs the suite once. It is used by one goroutine.
type runner struct {
	ctx      context.Context
	opts     Options
	dataDir  string
	rep      Report
	pkg      *pluginpkg.Package
	command  string     // the resolved runtime command
	sessions []*session // every start, for stdout and stderr

	// The plugin's confinement (planConfinement): the policy the helper
	// applies (nil: unconfined), its temporary directory, and what it was
	// denied (nil when unconfined).
	policy *confine.Policy
	tmp    string
	denied *denials

	pingVerdict *verdict // the ping case, completed by the calls step
}

// add records a case.
func (r *runner) add(c Case) { r.rep.Cases = append(r.rep.Cases, c) }

// report returns the cases in the documented order, each fixed case not
// run marked skipped.
func (r *runner) report() Report {
	rep := r.rep
	rep.Cases = slices.Clone(rep.Cases)
	rep.Denials = r.denied.all()
	for i := range rep.Cases {
		rep.Cases[i] = withDenials(rep.Cases[i], rep.Denials)
	}
	have := map[string]bool{}
	for _, c := range rep.Cases {
		have[c.Name] = true
		if group := caseGroupOf(c.Name); group != c.Name {
			have[group] = true
		}
	}
	for _, name := range caseOrder {
		if !have[name] {
			rep.Cases = append(rep.Cases, Case{Name: name, Status: Skip, Reason: "not run: an earlier case failed"})
		}
	}
	rank := func(name string) int { return slices.Index(caseOrder, caseGroupOf(name)) }
	slices.SortStableFunc(rep.Cases, func(a, b Case) int { return rank(a.Name) - rank(b.Name) })
	return rep
}

// caseGroupOf returns the fixed case a per-declaration case stands in
// for: "calls" for call/<kind>/<id>, "streams" for stream/provider/<ref>;
// else name.
func caseGroupOf(name string) string {
	switch {
	case strings.HasPrefix(name, callPrefix):
		return caseCalls
	case strings.HasPrefix(name, streamPrefix):
		return caseStreams
	}
	return name
}

// run runs every case. Its error is ctx's.
func (r *runner) run() error {
	defer func() {
		for _, s := range r.sessions {
			s.release()
		}
		if r.tmp != "" {
			os.RemoveAll(r.tmp)
		}
	}()
	if !r.manifest() {
		return nil
	}
	if ok, err := r.planConfinement(r.env()); !ok || err != nil {
		return err
	}
	if err := r.first(); err != nil {
		return err
	}
	if r.ctx.Err() == nil && r.passed(caseHandshake) {
		if err := r.malformed(); err != nil {
			return err
		}
	}
	if r.passed(caseHandshake) {
		r.callbacks()
	}
	r.stdout()
	r.stderr()
	return r.ctx.Err()
}

// first runs the cases of the first start, in order.
func (r *runner) first() error {
	s, res, err := r.start(true)
	if err != nil || s == nil || res == nil {
		if s != nil {
			r.stopQuietly(s)
		}
		return err
	}
	r.declarations(res)
	steps := []func(*session, *protocol.InitializeResult) error{r.ping, r.calls, r.cancel, r.streams, r.unknownMethod}
	for _, step := range steps {
		if err := step(s, res); err != nil {
			return err
		}
	}
	exited, err := r.shutdown(s)
	if err != nil {
		return err
	}
	return r.group(s, exited)
}

// passed reports whether the named case passed or only warned.
func (r *runner) passed(name string) bool {
	for _, c := range r.rep.Cases {
		if c.Name == name {
			return c.Status == Pass || c.Status == Warn
		}
	}
	return false
}

// manifest reads the package as the kernel would before starting it, and
// reports whether it can be started.
func (r *runner) manifest() bool {
	path := filepath.Join(r.rep.Dir, pluginpkg.ManifestFile)
	m, err := pluginpkg.ParseFile(path)
	if err != nil {
		r.add(Case{Name: caseManifest, Status: Fail, Reason: manifestProblem(err)})
		return false
	}
	r.rep.Plugin, r.rep.Version = m.Name, m.Version.String()
	if m.Runtime == nil {
		r.add(Case{Name: caseManifest, Status: Fail,
			Reason: "a declarative package (no runtime): there is no plugin process to check"})
		return false
	}
	if err := m.CheckKernel(); err != nil {
		r.add(Case{Name: caseManifest, Status: Fail, Reason: "kernel: " + err.Error() + " (§8)"})
		return false
	}
	r.pkg = &pluginpkg.Package{Name: m.Name, Dir: r.rep.Dir, ManifestPath: path, Manifest: m, Enabled: true}
	cmd, err := r.pkg.CommandPath()
	if err != nil {
		r.add(Case{Name: caseManifest, Status: Fail, Reason: "runtime.command: " + err.Error()})
		return false
	}
	r.command = cmd
	kernel := "no protocol range (any version)"
	if m.KernelText != "" {
		kernel = fmt.Sprintf("protocol range %s admits %s", m.KernelText, protocol.Version)
	}
	r.add(Case{Name: caseManifest, Status: Pass,
		Reason: fmt.Sprintf("valid; runtime.command %s found; %s", m.Runtime.Command, kernel)})
	return true
}

// manifestProblem says why a manifest does not load, every problem on one
// line.
func manifestProblem(err error) string {
	var ve *pluginpkg.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	problems := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		problems[i] = p.String()
	}
	return pluginpkg.ManifestFile + ": " + strings.Join(problems, "; ") + " (see kernelctl validate)"
}

// verdict collects what one case found: failures, each a MUST of
// protocol.md broken, and warnings, each a SHOULD.
type verdict struct{ fails, warns []string }

func (v *verdict) fail(format string, a ...any) { v.fails = append(v.fails, fmt.Sprintf(format, a...)) }
func (v *verdict) warn(format string, a ...any) { v.warns = append(v.warns, fmt.Sprintf(format, a...)) }

// ok reports whether nothing failed.
func (v *verdict) ok() bool { return len(v.fails) == 0 }

// result is the case: failed when anything failed (failures first, then
// warnings), else warned when anything warned, else passed with pass.
func (v *verdict) result(name, pass string) Case {
	switch {
	case len(v.fails) > 0:
		return Case{Name: name, Status: Fail, Reason: strings.Join(append(v.fails, v.warns...), "; ")}
	case len(v.warns) > 0:
		return Case{Name: name, Status: Warn, Reason: strings.Join(v.warns, "; ")}
	}
	return Case{Name: name, Status: Pass, Reason: pass}
}

// plural returns "1 provider" or "2 providers".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
