//go:build unix

package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// chaosKindWeights are the odds of each kind of call a caller makes.
var chaosKindWeights = [numKinds]int{kindIntercept: 3, kindProvider: 2, kindAction: 1, kindHostCall: 2,
	kindPluginCall: 2, kindCycle: 1, kindStream: 2, kindRelay: 2}

// pickKind returns a kind of call at random, by chaosKindWeights.
func pickKind() chaosKind {
	total := 0
	for _, w := range chaosKindWeights {
		total += w
	}
	n := rand.IntN(total)
	for k, w := range chaosKindWeights {
		if n < w {
			return chaosKind(k)
		}
		n -= w
	}
	panic("unreachable")
}

// chaosCall is one call a caller makes: its kind, the plugin it targets,
// the plugins it needs (the target, and the callee of a call through the
// host), and how long the caller itself may add to it (a consumer's
// pauses), beyond its deadlines.
type chaosCall struct {
	kind   chaosKind
	target string
	needs  []string
	pauses time.Duration
}

// caller makes calls of every kind, at random, until ctx is done, and
// checks each outcome.
func (r *chaosRig) caller(ctx context.Context) {
	n := len(r.plugs)
	for ctx.Err() == nil {
		i := rand.IntN(n)
		nb := chaosNeighbours(i, n)
		c := chaosCall{kind: pickKind(), target: r.plugs[i].name}
		callee := r.plugs[nb[rand.IntN(len(nb))]].name
		switch c.kind {
		case kindIntercept:
			for name, req := range r.required {
				if req {
					c.needs = append(c.needs, name)
				}
			}
			r.run(c, r.intercept)
		case kindProvider, kindAction, kindHostCall:
			c.needs = []string{c.target}
			r.run(c, r.direct)
		case kindPluginCall, kindCycle:
			c.needs = []string{c.target, callee}
			r.run(c, func(c *chaosCall) (bool, error) { return r.viaPlugin(c, callee) })
		case kindStream:
			c.needs = []string{c.target}
			r.run(c, r.stream)
		case kindRelay:
			c.needs = []string{c.target, callee}
			r.run(c, func(c *chaosCall) (bool, error) { return r.relay(c, callee) })
		}
		r.checkGeneration()
	}
}

// run makes the call c with fn, which reports whether it succeeded, and
// the error it failed with, if any, having checked the outcome. run checks
// its duration against its bound and counts it: by kind, and whether it
// was made between faults. A call that failed because a plugin it needs is
// down is followed by a pause of 5ms, as a client would retry later.
func (r *chaosRig) run(c chaosCall, fn func(*chaosCall) (bool, error)) {
	st := &r.st.kinds[c.kind]
	st.calls.Add(1)
	running := true
	faults := make([]int64, len(c.needs))
	for i, name := range c.needs {
		faults[i] = r.faults[name].Load()
		if cl := clientNamed(r.k, name); cl == nil || cl.Err() != nil {
			running = false
		}
	}
	start := time.Now()
	ok, err := fn(&c)
	if d, bound := time.Since(start), r.bound(c.kind)+c.pauses; d > bound {
		r.late(lateCall{fmt.Sprintf("a %s to %q", strings.TrimSuffix(chaosKindNames[c.kind], "s"), c.target), d - bound, err})
	}
	between := running
	for i, name := range c.needs {
		between = between && r.faults[name].Load() == faults[i]
	}
	if ok {
		st.ok.Add(1)
	} else if err != nil {
		r.failed(c.kind, err)
	}
	if errors.Is(err, sidecar.ErrClosed) {
		r.st.closedUnder.Add(1)
	}
	if between {
		st.between.Add(1)
		if ok {
			st.betweenOK.Add(1)
		}
	}
	if errors.Is(err, ErrPluginDown) {
		time.Sleep(5 * time.Millisecond)
	}
}

// bound is how long a call of kind may take, by its deadlines: an
// interceptor chain runs every plugin under the intercept deadline, every
// other call is bounded by one deadline, the whole of a call through the
// host and of a stream included; each with 2s to spare.
func (r *chaosRig) bound(kind chaosKind) time.Duration {
	d := r.k.config().Deadlines
	switch kind {
	case kindIntercept:
		return time.Duration(len(r.plugs))*d.Intercept + 2*time.Second
	case kindAction:
		return d.Action + 2*time.Second
	}
	return d.Provider + 2*time.Second
}

// intercept dispatches the interceptor chain and checks its outcome: a
// result, or a required plugin's *PluginError. A result with skipped
// optional steps is a success.
func (r *chaosRig) intercept(*chaosCall) (bool, error) {
	res, err := r.k.Intercept(context.Background(), contribution.Point("tool.before"), json.RawMessage(`[]`))
	var pe *PluginError
	switch {
	case (res == nil) == (err == nil):
		r.st.violate("an intercept returned %v and %v: want exactly one", res, err)
	case err == nil:
		r.checkResult(res)
		return true, nil
	case errors.As(err, &pe):
		if !pe.Required || !r.required[pe.Plugin] {
			r.st.violate("an optional plugin's failure failed the call: %v", err)
		}
	default:
		r.st.violate("untyped error: %v", err)
	}
	return false, err
}

func (r *chaosRig) checkResult(res *InterceptResult) {
	skipped := false
	for _, s := range res.Steps {
		if s.Decision == DecisionSkipped {
			skipped = true
			if r.required[s.Plugin] {
				r.st.violate("required plugin %q was skipped: %v", s.Plugin, s.Err)
			}
		}
	}
	if skipped {
		r.st.skipped.Add(1)
	}
	if res.Denied {
		r.st.violate("an intercept was denied, which no plugin does: %v", res.Reason)
	}
}

// direct makes a provider call, an action or a call of the host's handler
// through the target's "call" provider, and checks its outcome: an
// output (the handler's answers with the caller and the input), or a
// *PluginError naming the target.
func (r *chaosRig) direct(c *chaosCall) (bool, error) {
	var out json.RawMessage
	var err error
	switch c.kind {
	case kindProvider:
		out, err = r.k.CallProvider(context.Background(), "plugin/"+c.target+"/get", json.RawMessage(`[]`))
	case kindAction:
		out, err = r.k.RunAction(context.Background(), "plugin/"+c.target+"/act", json.RawMessage(`{}`))
	default:
		out, err = r.k.CallProvider(context.Background(), "plugin/"+c.target+"/call",
			json.RawMessage(`{"capability":"host.log","method":"write","input":{"n":1}}`))
		if err == nil && !jsonEq(out, fmt.Sprintf(`{"caller":%q,"input":{"n":1}}`, c.target)) {
			r.st.violate("a host call from %q answered %s", c.target, out)
		}
	}
	codes := pluginCodes
	if c.kind == kindHostCall {
		codes = hostCodes
	}
	return r.checkDirect(c, out, err, codes)
}

// checkDirect checks the outcome of a call to c.target: an output, or a
// *PluginError naming the target with its policy; an optional target
// that failed may also be missing from the generation
// (ErrUnknownTarget). A *protocol.Error the plugin answered with
// must have one of the codes in codes.
func (r *chaosRig) checkDirect(c *chaosCall, out json.RawMessage, err error, codes []int) (bool, error) {
	kind := strings.TrimSuffix(chaosKindNames[c.kind], "s")
	var pe *PluginError
	var we *protocol.Error
	switch {
	case (out == nil) == (err == nil):
		r.st.violate("a %s to %q returned %q and %v: want exactly one", kind, c.target, out, err)
	case err == nil:
		return true, nil
	case errors.As(err, &pe):
		if pe.Plugin != c.target || pe.Required != r.required[c.target] {
			r.st.violate("a %s to %q failed with an error naming %q (required %v): %v", kind, c.target, pe.Plugin, pe.Required, err)
		}
		if errors.As(err, &we) && !slices.Contains(codes, we.Code) {
			r.st.violate("a %s to %q failed with an unexpected code: %v", kind, c.target, err)
		}
	case errors.Is(err, ErrUnknownTarget) && !r.required[c.target]:
	default:
		r.st.violate("a %s to %q failed with an untyped error: %v", kind, c.target, err)
	}
	return false, err
}

// The codes of the *protocol.Error a call may fail with, by what it
// calls. A plugin's own failure is -32000: its chaos, or, passed on by the
// caller, the callee's, or a call of the caller that failed before the
// host answered it. A call through the host may also fail with -32006
// when the callee is down or crashes, -32800 when its parent's end or
// deadline cancels it, and -32603 when the host fails answering it (a
// host handler's failure, or a callee breaking its stream's flow
// control); a cycle ends in -32007 when no fault ends it first.
var (
	pluginCodes = []int{protocol.CodePluginError}
	hostCodes   = []int{protocol.CodePluginError, protocol.CodeRequestCancelled, wire.CodeInternalError}
	calleeCodes = []int{protocol.CodePluginError, protocol.CodeNotAvailable, protocol.CodeRequestCancelled, wire.CodeInternalError}
	cycleCodes  = append(slices.Clip(calleeCodes), wire.CodeDepthExceeded)
)

// viaPlugin makes the target call callee's provider get through the host
// (a plugin call), or start a cycle through callee and back (a cycle), and
// checks the outcome. A plugin call answers the input get echoes. A cycle
// never answers an output: it succeeds when it ends in the depth bound's
// error (-32007), whose message shows the chain, from the target.
func (r *chaosRig) viaPlugin(c *chaosCall, callee string) (bool, error) {
	if c.kind == kindPluginCall {
		in := fmt.Sprintf(`{"capability":"chaos.%s","method":"get","input":[%d]}`, callee, rand.IntN(1000))
		out, err := r.k.CallProvider(context.Background(), "plugin/"+c.target+"/call", json.RawMessage(in))
		var want struct{ Input json.RawMessage }
		if err == nil && (json.Unmarshal([]byte(in), &want) != nil || !jsonEq(out, string(want.Input))) {
			r.st.violate("a plugin call from %q to %q answered %s to %s", c.target, callee, out, in)
		}
		return r.checkDirect(c, out, err, calleeCodes)
	}
	in := fmt.Sprintf(`{"via":["chaos.%s","chaos.%s"],"hop":0}`, callee, c.target)
	out, err := r.k.CallProvider(context.Background(), "plugin/"+c.target+"/cycle", json.RawMessage(in))
	if err == nil {
		r.st.violate("a cycle from %q through %q answered %s: only an error may end it", c.target, callee, out)
		return false, nil
	}
	r.checkDirect(c, out, err, cycleCodes)
	var we *protocol.Error
	if !errors.As(err, &we) || we.Code != wire.CodeDepthExceeded {
		return false, err
	}
	chain := strings.Repeat(c.target+" → "+callee+" → ", 4) + c.target
	if !strings.Contains(we.Message, "call depth exceeded (at most 8): depth 9: "+chain) {
		r.st.violate("a cycle from %q through %q ended in %v, which does not show its chain %s", c.target, callee, err, chain)
	}
	r.st.depthEnds.Add(1)
	return true, nil
}

// chaosHandler is the host's handler of host.log in TestChaos: it answers
// the caller and the input, but is slow (5-30ms) one time in twenty and
// fails one time in a hundred.
func chaosHandler(ctx context.Context, call *capability.Call) (json.RawMessage, error) {
	switch n := rand.IntN(100); {
	case n == 0:
		return nil, errors.New("failed on purpose")
	case n <= 5:
		t := time.NewTimer(time.Duration(5+rand.IntN(25)) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return json.Marshal(map[string]any{"caller": call.Caller, "input": call.Input})
}

// checkGeneration asserts the current generation is complete: every
// interceptor's plugin is a member, and so is every required plugin.
func (r *chaosRig) checkGeneration() {
	g := r.k.Current()
	if g == nil {
		r.st.violate("no current generation")
		return
	}
	for _, c := range g.Registry().Interceptors("tool.before") {
		if g.Member(c.Source.Plugin) == nil {
			r.st.violate("generation %d has an interceptor of %q, which is not a member", g.Number(), c.Source.Plugin)
		}
	}
	for name, req := range r.required {
		if req && g.Member(name) == nil {
			r.st.violate("generation %d lacks required plugin %q", g.Number(), name)
		}
	}
}
