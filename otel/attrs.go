package kernelotel

import (
	"errors"
	"runtime/debug"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// module is the path of this module, whose version is the instrumentation
// scope's.
const module = "github.com/extkernel/extkernel/otel"

// Attribute keys of extkernel's own.
const (
	keyPlugin     = attribute.Key("extkernel.plugin")
	keyKind       = attribute.Key("extkernel.kind")
	keyKey        = attribute.Key("extkernel.key")
	keyCaller     = attribute.Key("extkernel.caller")
	keyGeneration = attribute.Key("extkernel.generation")
	keyOutcome    = attribute.Key("extkernel.outcome")
	// keyCause says why a plugin started: "build" (a generation's build or
	// a supervised restart) or "activation" (a lazy member's first use).
	keyCause = attribute.Key("extkernel.start.cause")
	// keyUse is a usage key of extkernel.plugin.uses: a feature
	// ("calls", "progress", ...) or a protocol minor ("protocol/1.4").
	keyUse = attribute.Key("extkernel.use")
)

// rpcSystem is rpc.system for every call: the plugin protocol is JSON-RPC
// 2.0 (docs/protocol.md).
var rpcSystem = semconv.RPCSystemKey.String("jsonrpc")

// Bucket boundaries, in seconds, of the duration histograms. A call
// through the kernel takes tens of microseconds when the plugin answers at
// once and up to the host's deadlines (30 s for a provider by default,
// longer with progress); a plugin start takes milliseconds.
var (
	callBuckets = []float64{0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
		0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}
	startBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
)

// callAttrs are the attributes of a call's span and metrics, before its
// outcome: the called plugin and kind, the caller, and the RPC triple.
// rpc.service and rpc.method are the capability and method of a plugin's
// capability/call, else the called plugin and the contribution's key.
func callAttrs(info observe.CallInfo) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, rpcSystem, keyPlugin.String(info.Plugin))
	if info.Kind != "" {
		attrs = append(attrs, keyKind.String(string(info.Kind)))
	}
	if info.Caller != "" {
		return append(attrs, keyCaller.String(info.Caller), semconv.RPCService(info.Capability), semconv.RPCMethod(info.Method))
	}
	return append(attrs, semconv.RPCService(info.Plugin), semconv.RPCMethod(info.Key))
}

// spanName is the name of a call's span: "<capability>/<method>" for a
// plugin's call a host handler serves (rpc.service/rpc.method), else
// "<kind> <plugin>".
func spanName(info observe.CallInfo) string {
	if info.Plugin == capability.HostProvider {
		return info.Capability + "/" + info.Method
	}
	return string(info.Kind) + " " + info.Plugin
}

// errorAttrs are the attributes of a failed call: error.type, the
// kernel's name for the failure (observe.CallOutcome.ErrorType), and, for a
// JSON-RPC error answer, rpc.jsonrpc.error_code.
func errorAttrs(out observe.CallOutcome) []attribute.KeyValue {
	typ := out.ErrorType
	if typ == "" {
		typ = semconv.ErrorTypeOther.Value.AsString()
	}
	attrs := []attribute.KeyValue{semconv.ErrorTypeKey.String(typ)}
	var pe *protocol.Error
	if errors.As(out.Err, &pe) {
		attrs = append(attrs, semconv.RPCJSONRPCErrorCode(pe.Code))
	}
	return attrs
}

// scopeVersion is the version of the instrumentation scope: this module's
// version in the running binary's build info.
func scopeVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return moduleVersion(bi)
}

// moduleVersion returns this module's version in bi: the main module's
// or the dependency's (its replacement's, if versioned), "(devel)" for a
// build from a working tree, a replacement by a directory, or no build
// information.
func moduleVersion(bi *debug.BuildInfo) string {
	const devel = "(devel)"
	if bi == nil {
		return devel
	}
	if bi.Main.Path == module {
		if bi.Main.Version == "" {
			return devel
		}
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path != module {
			continue
		}
		if d.Replace != nil {
			if d.Replace.Version == "" {
				return devel
			}
			return d.Replace.Version
		}
		return d.Version
	}
	return devel
}
