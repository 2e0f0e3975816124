package sidecar

import (
	"encoding/json"
	"fmt"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// Features (protocol 1.4, docs/protocol.md §4.6). The host announces
// every feature it serves (wire.AllFeatures) in initialize; the plugin's
// answer says which it uses. An answer before 1.4.0 carries none and is
// taken to use those of 1.3 (wire.Features13): such a plugin is served
// exactly as a 1.3 host served it. A plugin of 1.4 or later is served
// only what it announced:
//
//   - its capability/call without "calls" is answered -32601, as a 1.0
//     host answers it; one asking for a stream without "streams" is
//     answered -32602;
//   - its $/cancel without "cancel" and its $/progress without
//     "progress" are ignored, as an older host ignores them (the call
//     goes on; its deadline is not extended);
//   - the traceparent of its calls without "trace" is ignored, and the
//     host sends it none;
//   - the host asks it for no stream without "streams" (its provider's
//     output is the stream's one item), and its contributions without
//     "contributions" fail the handshake.
//
// Each ignored use is logged once per process, as a warning naming the
// feature. Every use served is reported to Options.OnUse.

// featureInit is what the reader takes from the answer to initialize
// before it reads on, so that the plugin's next message is judged by the
// features it announced.
type featureInit struct {
	ProtocolVersion string   `json:"protocol_version"`
	Features        []string `json:"features"`
}

// takeFeatures records the features of the plugin's answer to
// initialize, result: those it announced when it answered 1.4.0 or later,
// else those of 1.3. The reading goroutine calls it before it reads the
// next message; a result that does not decode leaves none (the handshake
// fails on it).
func (c *Client) takeFeatures(result json.RawMessage) {
	var fi featureInit
	if err := json.Unmarshal(result, &fi); err != nil {
		return
	}
	f := wire.Features13
	if wire.Announces(fi.ProtocolVersion) {
		f = wire.ParseFeatures(fi.Features)
	}
	c.features.Store(uint32(f))
}

// uses reports whether the plugin announced (or, before 1.4, is taken to
// use) the feature f.
func (c *Client) uses(f wire.Features) bool { return wire.Features(c.features.Load()).Has(f) }

// used reports one use of the feature f to Options.OnUse.
func (c *Client) used(f wire.Features) {
	if c.opts.OnUse != nil {
		c.opts.OnUse(c, wire.FeatureName(f))
	}
}

// unannounced logs, once per process and feature, that the plugin used
// the feature f, which it did not announce, and that what it sent was
// ignored or refused (what).
func (c *Client) unannounced(f wire.Features, what string) {
	bit := uint32(f)
	for {
		old := c.warned.Load()
		if old&bit != 0 {
			return
		}
		if c.warned.CompareAndSwap(old, old|bit) {
			break
		}
	}
	c.log.Warn(fmt.Sprintf("the plugin uses the %q feature, which it did not announce in initialize (protocol 1.4): %s", wire.FeatureName(f), what))
}

// reportHandshake reports the uses of the handshake: the protocol version the
// plugin answered, and its contributions of host-declared kinds.
func (c *Client) reportHandshake(res *protocol.InitializeResult) {
	if c.opts.OnUse == nil {
		return
	}
	c.opts.OnUse(c, wire.ProtocolUse(res.ProtocolVersion))
	if len(res.Contributions) > 0 {
		c.used(wire.HasContributions)
	}
}

// featureProblems returns the handshake problems of an answer that
// declares what it did not announce: contributions without
// "contributions".
func (c *Client) featureProblems(res *protocol.InitializeResult) []string {
	if len(res.Contributions) > 0 && !c.uses(wire.HasContributions) {
		return []string{fmt.Sprintf("contributions: %d declared, but the answer (protocol %s) does not announce the %q feature",
			len(res.Contributions), res.ProtocolVersion, wire.FeatureContributions)}
	}
	return nil
}

// pluginCancel handles the plugin's $/cancel of its call id: ignored
// from a plugin that did not announce the "cancel" feature.
func (c *Client) pluginCancel(id json.RawMessage) {
	if !c.uses(wire.HasCancel) {
		c.unannounced(wire.HasCancel, "its $/cancel is ignored")
	} else if c.cancelCall(id) {
		c.used(wire.HasCancel)
	}
}

// invoking reports the use of a request about to be sent: a
// contribution/invoke is a use of "contributions".
func (c *Client) invoking(method string) {
	if method == wire.MethodContributionInvoke {
		c.used(wire.HasContributions)
	}
}

// untraced returns params without a traceparent when the plugin does not
// use trace context: the host sends it none.
func (c *Client) untraced(params any) any {
	if c.uses(wire.HasTrace) {
		return params
	}
	return wire.SetTraceparent(params, "")
}
