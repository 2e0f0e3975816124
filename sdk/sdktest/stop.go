package sdktest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
)

// groupSettle bounds how long the suite waits, after the plugin exited,
// for the rest of its process group to exit too.
const groupSettle = 500 * time.Millisecond

// shutdown runs the host's stop sequence (§9 steps 1 and 2): shutdown,
// its answer within the shutdown grace, then the end of stdin and the
// exit within what is left of the grace (§5.7, §3). A plugin still running
// then is ended as the host ends it (SIGTERM, SIGKILL). It reports whether
// the plugin exited by itself.
func (r *runner) shutdown(s *session) (bool, error) {
	var v verdict
	if s.gone() { // a crash, already reported by the case it happened in
		v.fail("shutdown could not be sent%s", s.why())
		r.add(v.result(caseShutdown, ""))
		s.closeStdin()
		exited, err := s.waitExit(r.ctx, wire.DefaultShutdownGrace)
		if !exited {
			s.terminate(r.ctx)
		}
		return exited, err
	}
	start := time.Now()
	a, ok, err := s.call(r.ctx, wire.MethodShutdown, struct{}{}, wire.DefaultShutdownGrace)
	if err != nil {
		return false, err
	}
	switch {
	case !ok:
		v.fail("%s; it is answered at once (§5.7)", s.notAnswered("shutdown", wire.DefaultShutdownGrace))
	case a.m.Error != nil:
		v.warn("shutdown was answered with error %d: %s; its result is {} (§5.7)", a.m.Error.Code, quoteLimited(a.m.Error.Message, 80))
	case !isObject(a.m.Result):
		v.warn("shutdown was answered with %s; its result is {} (§5.7)", quote(a.m.Result))
	}
	s.closeStdin()
	exited, err := s.waitExit(r.ctx, wire.DefaultShutdownGrace-time.Since(start))
	if err != nil {
		return false, err
	}
	if !exited {
		v.fail("still running %v after shutdown and the end of its stdin; a plugin MUST exit when its stdin reaches end of file (§3, §9)", wire.DefaultShutdownGrace)
		s.terminate(r.ctx)
	} else if status := s.proc.ExitStatus(); status != "exit status 0" {
		v.warn("exited with %s after shutdown; the SDKs exit with status 0 (§5.7)", status)
	}
	r.add(v.result(caseShutdown, "answered shutdown, then exited with status 0 once its stdin closed, within "+wire.DefaultShutdownGrace.String()))
	return exited, nil
}

// group checks that nothing of the plugin is left once it exited: no
// process of its process group (what a plugin starts ends with it, §3,
// §9), and no process that left the group holding its pipes (a plugin
// MUST NOT leave its process group, §9; found on Linux only). It then
// releases the session.
func (r *runner) group(s *session, exitedItself bool) error {
	var v verdict
	pgid := s.proc.PID()
	if exitedItself {
		left, err := r.settleGroup(pgid)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			v.fail("process group %d still had %s %v after the plugin exited; what a plugin starts MUST end with it (§3, §9)",
				pgid, strings.Join(left, ", "), groupSettle)
		}
	}
	if holders := s.release(); len(holders) > 0 {
		v.fail("%s left the plugin's process group holding its stdout or stderr; a plugin MUST NOT leave its process group (§9)",
			pidList(holders))
	}
	if exitedItself || !v.ok() {
		r.add(v.result(caseGroup, "no process of the plugin was left after it exited"))
	} else {
		r.add(Case{Name: caseGroup, Status: Skip, Reason: "the plugin did not exit by itself (see shutdown): the suite killed its process group"})
	}
	return nil
}

// settleGroup waits up to groupSettle for process group pgid to empty and
// returns what is still in it.
func (r *runner) settleGroup(pgid int) ([]string, error) {
	deadline := time.NewTimer(groupSettle)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		left, ok := groupMembers(pgid)
		if !ok || len(left) == 0 {
			return nil, nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return left, nil
		case <-r.ctx.Done():
			return nil, r.ctx.Err()
		}
	}
}

func pidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = fmt.Sprint(p)
	}
	if len(pids) == 1 {
		return "pid " + s[0]
	}
	return "pids " + strings.Join(s, ", ")
}

// stopQuietly ends a session whose stop is no case: the end of its stdin,
// the shutdown grace, then SIGTERM and SIGKILL; then it releases it.
func (r *runner) stopQuietly(s *session) {
	s.closeStdin()
	if ok, _ := s.waitExit(r.ctx, wire.DefaultShutdownGrace); !ok {
		s.terminate(r.ctx)
	}
	s.release()
}

// malformedFrames are sent to the second start of the plugin, each with
// the code its error answer should carry (§1).
var malformedFrames = []struct {
	line string
	code int
	what string
}{
	{`{"jsonrpc":"2.0","id":`, wire.CodeParseError, "invalid JSON"},
	{`["not","a","message"]`, wire.CodeInvalidRequest, "a JSON value that is not a message"},
}

// malformed starts the plugin a second time, sends it malformed frames
// and then a ping: a plugin SHOULD answer each with an error whose id is
// null, and keep reading (§1).
func (r *runner) malformed() error {
	s, res, err := r.start(false)
	if err != nil || s == nil || res == nil {
		if s != nil {
			r.stopQuietly(s)
		}
		return err
	}
	defer r.stopQuietly(s)
	var v verdict
	for _, f := range malformedFrames {
		if err := s.writeLine([]byte(f.line)); err != nil {
			break // the plugin is gone: said below
		}
	}
	deadline := time.Now().Add(cancelWait)
	for _, f := range malformedFrames {
		a, ok, err := s.await(r.ctx, s.nulls, deadline)
		if err != nil {
			return err
		}
		switch {
		case !ok && s.gone():
			v.warn("stopped at the malformed frames; a plugin SHOULD answer each with an error whose id is null, and keep reading (§1)%s", s.why())
			r.add(v.result(caseMalformed, ""))
			return nil
		case !ok:
			v.warn("%s; it SHOULD be answered with error %d and id null (§1)", s.notAnswered(f.what+" "+quote([]byte(f.line)), cancelWait), f.code)
		case a.m.Error.Code != f.code:
			v.warn("%s %s was answered with error %d; it SHOULD be %d (§1)", f.what, quote([]byte(f.line)), a.m.Error.Code, f.code)
		}
	}
	a, ok, err := s.call(r.ctx, wire.MethodPing, struct{}{}, heartbeatTimeout)
	if err != nil {
		return err
	}
	if !ok || a.m.Error != nil {
		v.warn("stopped serving after the malformed frames: %s; a plugin SHOULD keep reading (§1)", s.notAnswered("ping", heartbeatTimeout))
	}
	r.add(v.result(caseMalformed, fmt.Sprintf("answered invalid JSON with %d and a non-message with %d, id null, and kept serving", wire.CodeParseError, wire.CodeInvalidRequest)))
	return nil
}

// stdout reports what, over every start, was on stdout and is not a valid
// frame answering a request in flight or a notification (§1, §2), or is
// one of a feature the plugin did not announce (§4.6).
func (r *runner) stdout() {
	var all []string
	for _, s := range r.sessions {
		for _, v := range s.violations() {
			if !slices.Contains(all, v) {
				all = append(all, v)
			}
		}
	}
	if len(all) == 0 {
		r.add(Case{Name: caseStdout, Status: Pass, Reason: "only JSON-RPC 2.0 frames, each response answering a request in flight"})
		return
	}
	r.add(Case{Name: caseStdout, Status: Fail, Reason: "nothing but frames the host expects may go to stdout (§1, §4.6): " + joinLimited(all, 3)})
}

// stderr reports the stderr lines, over every start, that are not log
// lines the host reads as meant (§1, "Logging on stderr"): a SHOULD.
func (r *runner) stderr() {
	var problems []string
	lines, more := 0, 0
	for i, s := range r.sessions {
		p, m, n := s.stderr.findings()
		for _, line := range p {
			problems = append(problems, fmt.Sprintf("start %d, %s", i+1, line))
		}
		more, lines = more+m, lines+n
	}
	if len(problems) == 0 {
		reason := "nothing written"
		if lines > 0 {
			reason = "every line is a log line (plain text or hclog JSON)"
		}
		r.add(Case{Name: caseStderr, Status: Pass, Reason: reason})
		return
	}
	reason := joinLimited(problems, 3)
	if more > 0 {
		reason += fmt.Sprintf(" (and %d more)", more)
	}
	r.add(Case{Name: caseStderr, Status: Warn, Reason: "each stderr line SHOULD be a log line (§1): " + reason})
}
