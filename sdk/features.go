package sdk

import (
	"context"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// The optional protocol features a host may support (docs/protocol.md
// §4.6, protocol 1.4), as HostSupports names them.
const (
	// FeatureCalls is capability/call (Call, CallStream).
	FeatureCalls = wire.FeatureCalls
	// FeatureCancel is the $/cancel of the plugin's own calls.
	FeatureCancel = wire.FeatureCancel
	// FeatureContributions is contributions of host-declared kinds
	// (Contribute).
	FeatureContributions = wire.FeatureContributions
	// FeatureProgress is $/progress (Progress).
	FeatureProgress = wire.FeatureProgress
	// FeatureStreams is streams, with their byte window (StreamProvider,
	// CallStream).
	FeatureStreams = wire.FeatureStreams
	// FeatureTrace is trace context (Traceparent, WithTraceparent).
	FeatureTrace = wire.FeatureTrace
)

// HostSupports reports whether the host the plugin serves supports the
// optional protocol feature named feature (FeatureCalls, ...): one the
// host announced in initialize (protocol 1.4 or later), or, from an older
// host, one its protocol_version implies. It reports false for a name it
// does not know, when no ServeIO runs and before initialize has been
// received (in an OnInitialize function it already answers). It is safe
// for concurrent use.
func (p *Plugin) HostSupports(feature string) bool {
	p.mu.Lock()
	s := p.mu.serving
	p.mu.Unlock()
	if s == nil {
		return false
	}
	f := wire.FeatureBit(feature)
	return f != 0 && s.host().Has(f)
}

// host returns the features of the host the session serves: none before
// initialize.
func (s *session) host() wire.Features { return wire.Features(s.hostFeats.Load()) }

// hostFeatures returns the features of the host that sent params: those
// it announced when it speaks 1.4 or later, else those its version
// implies.
func hostFeatures(params protocol.InitializeParams) wire.Features {
	if wire.Announces(params.ProtocolVersion) {
		return wire.ParseFeatures(params.Features)
	}
	return wire.ImpliedFeatures(params.ProtocolVersion)
}

// traceparent returns the traceparent ctx carries, for a call to a host
// that supports FeatureTrace, else "".
func (s *session) traceparent(ctx context.Context) string {
	if !s.host().Has(wire.HasTrace) {
		return ""
	}
	return Traceparent(ctx)
}
