package sdktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// cancelWait bounds how long the suite waits for the answer to a call it
// cancelled before it abandons the call, as the host abandons a cancelled
// call at once. protocol.md sets no bound for it; one second is the grace
// the SDKs give in-flight handlers on shutdown.
const cancelWait = time.Second

// unknownMethod is a method no plugin knows.
const unknownMethod = "sdktest/no-such-method"

// A target is one declaration the suite calls.
type target struct {
	kind   string // intercept, strategy, provider, action, or a host kind
	id     string
	method string
	params any
	input  json.RawMessage // the input params carries
}

func (t target) name() string { return callPrefix + t.kind + "/" + t.id }

// inputID is the target's key in Options.Inputs: "<kind>/<id>".
func (t target) inputID() string { return t.kind + "/" + t.id }

// targets lists the declarations of res as the suite calls them: kinds in
// the order intercept, strategy, provider, action, then the host kinds of
// contributions sorted, IDs sorted, each once. The input of each is
// inputs' entry for "<kind>/<id>", else the first example its declaration
// gives (a provider's schema examples; a contribution's data.examples, or
// the examples of its data's input_schema or schema), else null.
func targets(res *protocol.InitializeResult, inputs map[string]json.RawMessage) []target {
	var ts []target
	examples := map[string]json.RawMessage{}
	add := func(kind, method string, ids []string, params func(id string, in json.RawMessage) any) {
		slices.Sort(ids)
		for _, id := range slices.Compact(ids) {
			t := target{kind: kind, id: id, method: method, input: json.RawMessage("null")}
			if in, ok := inputs[t.inputID()]; ok {
				t.input = in
			} else if ex, ok := examples[t.inputID()]; ok {
				t.input = ex
			}
			t.params = params(id, t.input)
			ts = append(ts, t)
		}
	}
	var points, slots, refs, actions []string
	for _, d := range res.Interceptors {
		points = append(points, d.Point)
	}
	for _, d := range res.Strategies {
		slots = append(slots, d.Slot)
	}
	for _, d := range res.Providers {
		refs = append(refs, d.Ref)
		if ex := schemaExample(d.Schema); ex != nil {
			if _, ok := examples["provider/"+d.Ref]; !ok {
				examples["provider/"+d.Ref] = ex
			}
		}
	}
	for _, d := range res.Actions {
		actions = append(actions, d.ID)
	}
	add("intercept", wire.MethodIntercept, points, func(id string, in json.RawMessage) any { return wire.InterceptParams{Point: id, Payload: in} })
	add("strategy", wire.MethodStrategyInvoke, slots, func(id string, in json.RawMessage) any { return wire.StrategyInvokeParams{Slot: id, Input: in} })
	add("provider", wire.MethodProviderInvoke, refs, func(id string, in json.RawMessage) any { return wire.ProviderInvokeParams{Ref: id, Input: in} })
	add("action", wire.MethodActionRun, actions, func(id string, in json.RawMessage) any { return wire.ActionRunParams{ID: id, Context: in} })
	keys := map[string][]string{}
	for _, d := range res.Contributions {
		keys[d.Kind] = append(keys[d.Kind], d.Key)
		if ex := dataExample(d.Data); ex != nil {
			if _, ok := examples[d.Kind+"/"+d.Key]; !ok {
				examples[d.Kind+"/"+d.Key] = ex
			}
		}
	}
	kinds := slices.Sorted(maps.Keys(keys))
	for _, kind := range kinds {
		add(kind, wire.MethodContributionInvoke, keys[kind], func(key string, in json.RawMessage) any {
			return wire.ContributionInvokeParams{Kind: kind, Key: key, Input: in}
		})
	}
	return ts
}

// schemaExample returns the first of a JSON Schema's examples, or nil.
func schemaExample(schema json.RawMessage) json.RawMessage {
	var s struct {
		Examples []json.RawMessage `json:"examples"`
	}
	if json.Unmarshal(schema, &s) == nil && len(s.Examples) > 0 {
		return s.Examples[0]
	}
	return nil
}

// dataExample returns the first example a contribution's data gives: its
// examples, else its input_schema's or its schema's, or nil.
func dataExample(data json.RawMessage) json.RawMessage {
	if ex := schemaExample(data); ex != nil {
		return ex
	}
	var d struct {
		InputSchema json.RawMessage `json:"input_schema"`
		Schema      json.RawMessage `json:"schema"`
	}
	if json.Unmarshal(data, &d) != nil {
		return nil
	}
	if ex := schemaExample(d.InputSchema); ex != nil {
		return ex
	}
	return schemaExample(d.Schema)
}

// ping checks that an idle ping is answered within the heartbeat timeout
// (§5.6); the calls step adds a ping sent while calls run (§6).
func (r *runner) ping(s *session, _ *protocol.InitializeResult) error {
	a, ok, err := s.call(r.ctx, wire.MethodPing, struct{}{}, heartbeatTimeout)
	if err != nil {
		return err
	}
	r.pingVerdict = new(verdict)
	checkPing(r.pingVerdict, a, ok, "a ping", s)
	return nil
}

// checkPing judges the answer to a ping.
func checkPing(v *verdict, a answer, ok bool, what string, s *session) {
	switch {
	case !ok:
		v.fail("%s; a plugin MUST answer ping promptly, within %v (§5.6, §6)", s.notAnswered(what, heartbeatTimeout), heartbeatTimeout)
	case a.m.Error != nil:
		v.fail("%s was answered with error %d: %s; its result is {} (§5.6)", what, a.m.Error.Code, quoteLimited(a.m.Error.Message, 80))
	case !isObject(a.m.Result):
		v.warn("%s was answered with %s; its result is {} (§5.6)", what, quote(a.m.Result))
	}
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// calls calls every declaration at once, with a ping among them, and
// judges each answer. A call still running at the call timeout is
// cancelled, as the host cancels it at its deadline.
func (r *runner) calls(s *session, res *protocol.InitializeResult) error {
	ts := targets(res, r.opts.Inputs)
	if len(ts) == 0 {
		r.add(Case{Name: caseCalls, Status: Pass, Reason: "declares no interceptor, strategy, provider, action or contribution"})
		r.add(r.pingVerdict.result(casePing, "answered ping within "+heartbeatTimeout.String()))
		return nil
	}
	keys, chans := make([]string, len(ts)), make([]chan answer, len(ts))
	for i, t := range ts {
		keys[i], chans[i], _ = s.request(t.method, t.params)
	}
	sent := time.Now()
	pkey, pch, perr := s.request(wire.MethodPing, struct{}{})
	answers, answered := make([]answer, len(ts)), make([]bool, len(ts))
	for i := range ts {
		if chans[i] == nil {
			continue
		}
		var err error
		if answers[i], answered[i], err = s.await(r.ctx, chans[i], sent.Add(r.opts.CallTimeout)); err != nil {
			return err
		}
	}
	var busy answer
	var busyOK bool
	if perr == nil {
		var err error
		if busy, busyOK, err = s.await(r.ctx, pch, sent.Add(heartbeatTimeout)); err != nil {
			return err
		}
		if !busyOK {
			s.abandon(pkey)
		}
	}
	checkPing(r.pingVerdict, busy, busyOK, fmt.Sprintf("a ping sent while %s ran", plural(len(ts), "call", "calls")), s)
	r.add(r.pingVerdict.result(casePing, "answered ping within "+heartbeatTimeout.String()+", also while calls ran"))
	cancelled, err := r.cancelLate(s, keys, chans, answers, answered)
	if err != nil {
		return err
	}
	for i, t := range ts {
		r.add(r.judgeCall(s, t, answers[i], answered[i], cancelled[i]))
	}
	return nil
}

// cancelLate sends $/cancel for every call not answered by the call
// timeout, waits cancelWait for their answers and abandons the rest. It
// returns which calls it cancelled.
func (r *runner) cancelLate(s *session, keys []string, chans []chan answer, answers []answer, answered []bool) ([]bool, error) {
	cancelled := make([]bool, len(keys))
	for i, key := range keys {
		if chans[i] != nil && !answered[i] {
			cancelled[i] = true
			_ = s.notify(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(key)})
		}
	}
	deadline := time.Now().Add(cancelWait)
	for i, key := range keys {
		if !cancelled[i] {
			continue
		}
		var err error
		if answers[i], answered[i], err = s.await(r.ctx, chans[i], deadline); err != nil {
			return nil, err
		}
		if !answered[i] {
			s.abandon(key)
		}
	}
	return cancelled, nil
}

// judgeCall is the case of one declaration's call.
func (r *runner) judgeCall(s *session, t target, a answer, ok, cancelled bool) Case {
	var v verdict
	after := ""
	if cancelled {
		after = fmt.Sprintf(" after the suite cancelled it at %v", r.opts.CallTimeout)
	}
	switch {
	case !ok && !cancelled:
		v.fail("%s was not sent or not answered%s", t.method, s.why())
	case !ok:
		if s.gone() {
			v.fail("no answer within %v, nor %v after $/cancel%s", r.opts.CallTimeout, cancelWait, s.why())
		} else {
			v.warn("no answer within %v, nor %v after $/cancel: the call was abandoned, as the host abandons it; a cancelled call SHOULD be answered with %d (§5.8)",
				r.opts.CallTimeout, cancelWait, protocol.CodeRequestCancelled)
		}
	case a.m.Error != nil:
		reason := fmt.Sprintf("answered error %d: %s%s", a.m.Error.Code, quoteLimited(a.m.Error.Message, 80), after)
		if denied := r.denied.scan(a.m.Error.Message); len(denied) > 0 {
			// Confined, the call failed on what the plugin may not reach.
			return Case{Name: t.name(), Status: Fail, Reason: reason + "; " + strings.Join(denied, "; ")}
		}
		return Case{Name: t.name(), Status: Pass, Reason: reason}
	case t.kind == "intercept":
		if d := checkDecision(a.m.Result); d != "" {
			v.fail("%s (§5.2)", d)
		} else {
			return Case{Name: t.name(), Status: Pass, Reason: "answered with a decision" + after}
		}
	case !isObject(a.m.Result):
		v.fail("the result is %s, not an object {\"output\": ...} (§5.3-§5.5, §5.14)", quote(a.m.Result))
	}
	return v.result(t.name(), "answered with a result"+after)
}

// checkDecision returns why an intercept result is not a decision, or "".
func checkDecision(raw json.RawMessage) string {
	if !isObject(raw) {
		return fmt.Sprintf("the result is %s, not an object {\"decision\": ...}", quote(raw))
	}
	var res protocol.InterceptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return "the result is not a decision: " + err.Error()
	}
	switch res.Decision {
	case protocol.DecisionContinue, protocol.DecisionDeny:
		return ""
	case protocol.DecisionModify:
		if len(res.Payload) == 0 {
			return "decision modify without a payload"
		}
		return ""
	}
	return fmt.Sprintf("decision %q is not continue, modify or deny", res.Decision)
}

// cancelTarget is the declaration the cancel case calls: the first
// provider, else action, else strategy, else interceptor.
func cancelTarget(ts []target) (target, bool) {
	for _, kind := range []string{"provider", "action", "strategy", "intercept"} {
		if i := slices.IndexFunc(ts, func(t target) bool { return t.kind == kind }); i >= 0 {
			return ts[i], true
		}
	}
	return target{}, false
}

// cancel sends a call and $/cancel for it right after, then a $/cancel
// for an id never used, then a ping (§5.8, §6).
func (r *runner) cancel(s *session, res *protocol.InitializeResult) error {
	var v verdict
	pass := "no declaration to call; a $/cancel for an unknown id was ignored"
	if t, ok := cancelTarget(targets(res, r.opts.Inputs)); ok {
		key, ch, err := s.request(t.method, t.params)
		if err == nil {
			_ = s.notify(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(key)})
			_, ok, err := s.await(r.ctx, ch, time.Now().Add(cancelWait))
			if err != nil {
				return err
			}
			if ok { // -32800, or the result when it had finished: both are right
				pass = fmt.Sprintf("%s %s, cancelled at once, was answered", t.kind, t.id)
			} else {
				s.abandon(key)
				v.warn("%s: the call was abandoned, as the host abandons it; a cancelled call SHOULD be answered with %d (§5.8)",
					s.notAnswered(fmt.Sprintf("%s %s, cancelled at once,", t.kind, t.id), cancelWait), protocol.CodeRequestCancelled)
			}
		}
	}
	_ = s.notify(wire.MethodCancel, wire.CancelParams{ID: json.RawMessage(`"sdktest-never-sent"`)})
	a, ok, err := s.call(r.ctx, wire.MethodPing, struct{}{}, heartbeatTimeout)
	if err != nil {
		return err
	}
	checkPing(&v, a, ok, "a ping after $/cancel", s)
	r.add(v.result(caseCancel, pass+"; ping answered after"))
	return nil
}

// unknownMethod sends a request no plugin knows: it is answered with
// -32601 (§2).
func (r *runner) unknownMethod(s *session, _ *protocol.InitializeResult) error {
	a, ok, err := s.call(r.ctx, unknownMethod, struct{}{}, r.opts.CallTimeout)
	if err != nil {
		return err
	}
	var v verdict
	switch {
	case !ok:
		v.fail("%s; every request is answered, an unknown one with %d (§2)", s.notAnswered(unknownMethod, r.opts.CallTimeout), protocol.CodeMethodNotFound)
	case a.m.Error == nil:
		v.fail("%s was answered with a result; an unknown method is answered with error %d (§2)", unknownMethod, protocol.CodeMethodNotFound)
	case a.m.Error.Code != protocol.CodeMethodNotFound:
		v.fail("%s was answered with error %d; an unknown method is answered with %d (§2)", unknownMethod, a.m.Error.Code, protocol.CodeMethodNotFound)
	}
	r.add(v.result(caseUnknown, fmt.Sprintf("%s was answered with %d", unknownMethod, protocol.CodeMethodNotFound)))
	return nil
}

// joinLimited joins the first n items and says how many more there were.
func joinLimited(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:n], "; ") + fmt.Sprintf("; and %d more", len(items)-n)
}
