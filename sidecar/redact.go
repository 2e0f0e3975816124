package sidecar

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/internal/redact"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// redactor is the one point every string a plugin supplies passes before
// the client logs it, quotes it in an error, or hands it to the host as a
// diagnostic (declarations, error answers): Options.Redact, with helpers
// for each shape plugin text arrives in. Results, notify data and the
// payloads of calls are the host's and are not rewritten.
type redactor func(string) string

// text redacts one string.
func (r redactor) text(s string) string { return r(s) }

// value returns v with every string in it redacted, object keys included,
// as encoding/json decodes it. It sets *changed when a string changed.
func (r redactor) value(v any, changed *bool) any { return redact.Func(r).Value(v, changed) }

// changed redacts s and sets *changed when that changed it.
func (r redactor) changed(s string, changed *bool) string { return redact.Func(r).Changed(s, changed) }

// object redacts the keys and values of m. Two keys that redact to the
// same text keep both values: the later ones in key order get a "#n"
// suffix.
func (r redactor) object(m map[string]any, changed *bool) map[string]any {
	return redact.Func(r).Object(m, changed)
}

// fields returns a copy of log fields with every key and string value
// redacted.
func (r redactor) fields(m map[string]any) map[string]any {
	var changed bool
	return r.object(m, &changed)
}

// raw redacts the strings and keys of a JSON value, returning raw itself
// when nothing changed. A value that does not decode is redacted as text.
// The JSON walk is package internal/redact's, which the admin server's
// redaction of notify data shares.
func (r redactor) raw(raw json.RawMessage) json.RawMessage { return redact.Func(r).JSON(raw) }

// errorAnswer returns a copy of an error answer whose message and data are
// redacted.
func (r redactor) errorAnswer(e *protocol.Error) *protocol.Error {
	cp := *e
	cp.Message = r(e.Message)
	cp.Data = r.raw(e.Data)
	return &cp
}

// frameError returns a copy of fe whose quote of the offending line and
// cause are redacted. (The FrameReader redacts the whole line before it
// quotes its start; the quote is redacted again here in case it was made
// by a reader without a redactor.)
func (r redactor) frameError(fe *wire.FrameError) *wire.FrameError {
	cp := *fe
	cp.Quote = r.quote(fe.Quote)
	cp.Err = r.err(fe.Err)
	return &cp
}

// quote redacts a strconv.Quote'd text, possibly followed by "...": the
// secret is looked for in the text the quote stands for, so that an
// escaped character in it does not hide it.
func (r redactor) quote(q string) string {
	body, more := strings.CutSuffix(q, "...")
	s, err := strconv.Unquote(body)
	if err != nil {
		return r(q)
	}
	rs := r(s)
	if rs == s {
		return q
	}
	if more {
		return strconv.Quote(rs) + "..."
	}
	return strconv.Quote(rs)
}

// err returns err itself when its text holds nothing to redact, otherwise
// an error with the redacted text that still matches what err matches
// (errors.Is and errors.As see err's chain) but no longer prints it.
func (r redactor) err(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if rm := r(msg); rm != msg {
		return &redactedError{msg: rm, cause: err}
	}
	return err
}

// redactedError is an error whose text was redacted.
type redactedError struct {
	msg   string
	cause error
}

func (e *redactedError) Error() string { return e.msg }

// Is reports whether the original error matches target (errors.Is), so
// that sentinels such as wire.ErrFrameTooLarge still match. There is
// no Unwrap: the original text is not reachable through the chain.
func (e *redactedError) Is(target error) bool { return errors.Is(e.cause, target) }

// declarations returns a copy of the plugin's answer to initialize with
// every string redacted, and a problem for each identifier that held
// secret text: a provider ref or action ID that had to be redacted would
// name a different contribution than the plugin serves, so such a
// handshake is refused. Names, versions, points, slots and capabilities
// are compared with the manifest after redaction, so a redacted one is
// refused there, quoted redacted; so are the kinds and keys of
// contributions.
func (r redactor) declarations(res *protocol.InitializeResult) (*protocol.InitializeResult, []string) {
	var problems []string
	cp := *res
	cp.ProtocolVersion, cp.Name, cp.Version = r(res.ProtocolVersion), r(res.Name), r(res.Version)
	cp.Provides = each(res.Provides, func(_ int, d protocol.CapabilityDecl) protocol.CapabilityDecl {
		return protocol.CapabilityDecl{Capability: r(d.Capability), Version: r(d.Version)}
	})
	cp.Interceptors = each(res.Interceptors, func(_ int, d protocol.InterceptorDecl) protocol.InterceptorDecl {
		return protocol.InterceptorDecl{Point: r(d.Point), Priority: d.Priority}
	})
	cp.Strategies = each(res.Strategies, func(_ int, d protocol.StrategyDecl) protocol.StrategyDecl {
		return protocol.StrategyDecl{Slot: r(d.Slot)}
	})
	cp.Providers = each(res.Providers, func(i int, d protocol.ProviderDecl) protocol.ProviderDecl {
		var changed bool
		out := protocol.ProviderDecl{Ref: r.changed(d.Ref, &changed), Description: r(d.Description), Schema: r.raw(d.Schema)}
		if changed {
			problems = append(problems, fmt.Sprintf("providers[%d]: ref %q holds secret text", i, out.Ref))
		}
		return out
	})
	cp.Actions = each(res.Actions, func(i int, d protocol.ActionDecl) protocol.ActionDecl {
		var changed bool
		out := protocol.ActionDecl{ID: r.changed(d.ID, &changed), Title: r(d.Title), Placement: r(d.Placement)}
		if changed {
			problems = append(problems, fmt.Sprintf("actions[%d]: id %q holds secret text", i, out.ID))
		}
		return out
	})
	cp.Contributions = each(res.Contributions, func(_ int, d protocol.ContributionDecl) protocol.ContributionDecl {
		return protocol.ContributionDecl{Kind: r(d.Kind), Key: r(d.Key), Priority: d.Priority, Title: r(d.Title), Data: r.raw(d.Data)}
	})
	return &cp, problems
}

// each returns f applied to every element of in, or nil for nil.
func each[T any](in []T, f func(int, T) T) []T {
	if in == nil {
		return nil
	}
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(i, v)
	}
	return out
}

// logNotification logs a log notification whose params are size bytes,
// its message, field keys and string values redacted, unless the rate
// limit suppresses it; one longer than maxStderrLine is logged cut
// (logCut), its fields not.
func (c *Client) logNotification(p wire.LogParams, size int) {
	switch {
	case !c.limit.allow():
	case size > maxStderrLine:
		logCut(c.log, p.Level, c.redact(p.Message), size)
	default:
		logFields(c.log, p.Level, c.redact(p.Message), c.redact.fields(p.Fields))
	}
}
