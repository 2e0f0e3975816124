package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/hostcap"
	"github.com/extkernel/extkernel/protocol"
)

// hostCapability is a host capability kernelctl implements: the major
// version it implements, and the handler serving plugins' calls to it,
// built from the capability's capability_config entry (nil when it has
// none), kernelctl's logger and the redaction of plugin text.
type hostCapability struct {
	major   uint64
	handler func(settings json.RawMessage, log hclog.Logger, redact func(string) string) (capability.Handler, error)
}

// hostCapabilities are the host capabilities kernelctl implements. `run`
// (and `call` without a running kernel) registers a handler for each one
// the config declares at a version of that major (docs/cli.md, "Host
// capabilities").
var hostCapabilities = map[capability.Key]hostCapability{
	"host.log":       {major: 1, handler: hostLog},
	hostcap.FSRead:   {major: 1, handler: fsRead},
	hostcap.NetFetch: {major: 1, handler: netFetch},
}

// hostHandlers returns the handlers of the host capabilities cfg declares
// that kernelctl implements, and a warning for each one it declares that
// kernelctl does not (plugins' calls to it are answered -32006), in
// config order. log is the logger plugins' lines go to. The problems say
// which capability_config entry a handler cannot be built from, and why,
// each with its key path.
func hostHandlers(cfg config.Config, log hclog.Logger) (handlers map[capability.Key]capability.Handler, warnings, problems []string) {
	handlers = map[capability.Key]capability.Handler{}
	redact := cfg.Redactor()
	if redact == nil {
		redact = func(s string) string { return s }
	}
	for _, c := range cfg.Capabilities {
		hc, ok := hostCapabilities[c.Key]
		switch {
		case !ok:
			warnings = append(warnings, fmt.Sprintf("the config declares host capability %s %s, which kernelctl does not implement: "+
				"plugins' calls to it are answered not available (-32006)", c.Key, c.Version))
		case c.Version.Major() != hc.major:
			warnings = append(warnings, fmt.Sprintf("the config declares host capability %s %s, but kernelctl implements %s %d.x: "+
				"plugins' calls to it are answered not available (-32006)", c.Key, c.Version, c.Key, hc.major))
		default:
			h, err := hc.handler(cfg.CapabilityConfig[c.Key], log, redact)
			if err != nil {
				problems = append(problems, fmt.Sprintf("capability_config.%s: %v", c.Key, err))
				continue
			}
			handlers[c.Key] = h
		}
	}
	return handlers, warnings, problems
}

// fsRead builds host.fs.read's handler (package kernel/hostcap) from its
// settings: {"roots": [...], "max_bytes"?: n}.
func fsRead(settings json.RawMessage, _ hclog.Logger, _ func(string) string) (capability.Handler, error) {
	var c hostcap.FSReadConfig
	if err := decodeSettings(settings, &c); err != nil {
		return nil, err
	}
	h, err := hostcap.NewFSRead(c)
	return h, trimKey(err, hostcap.FSRead)
}

// netFetch builds host.net.fetch's handler (package kernel/hostcap) from
// its settings: {"allow": [...], "max_bytes"?: n, "timeout"?: "10s"}.
func netFetch(settings json.RawMessage, _ hclog.Logger, _ func(string) string) (capability.Handler, error) {
	var c hostcap.NetFetchConfig
	if err := decodeSettings(settings, &c); err != nil {
		return nil, err
	}
	h, err := hostcap.NewNetFetch(c)
	return h, trimKey(err, hostcap.NetFetch)
}

// decodeSettings decodes a capability_config entry; none leaves v zero.
func decodeSettings(settings json.RawMessage, v any) error {
	if len(settings) == 0 || string(settings) == "null" {
		return nil
	}
	if err := json.Unmarshal(settings, v); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// trimKey drops the capability's name from the start of err, which the
// caller's key path already says.
func trimKey(err error, key capability.Key) error {
	if err == nil {
		return nil
	}
	return errors.New(strings.TrimPrefix(err.Error(), string(key)+": "))
}

// logWrite is the input of host.log's method write.
type logWrite struct {
	// Level is trace, debug, info (the default), warn or error.
	Level string `json:"level"`
	// Message is the line's message; it must not be empty.
	Message string `json:"message"`
	// Fields are the line's key-value pairs, logged in key order.
	Fields map[string]json.RawMessage `json:"fields"`
}

// hostLog serves host.log: its one method, write ({level, message,
// fields?}), logs a line through log under the calling plugin's name (as
// the plugin's own stderr lines are), every string of it redacted, and
// answers no output.
func hostLog(settings json.RawMessage, log hclog.Logger, redact func(string) string) (capability.Handler, error) {
	if len(settings) > 0 && string(settings) != "null" {
		return nil, errors.New("host.log takes no settings")
	}
	return func(_ context.Context, call *capability.Call) (json.RawMessage, error) {
		if call.Method != "write" {
			return nil, &protocol.Error{Code: protocol.CodeMethodNotFound, Message: fmt.Sprintf("host.log has no method %q (it has: write)", call.Method)}
		}
		var in logWrite
		if err := json.Unmarshal(call.Input, &in); err != nil || call.Input == nil || string(call.Input) == "null" {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: `host.log.write: input must be {"level": string, "message": string, "fields"?: object}`}
		}
		level := hclog.Info
		if in.Level != "" {
			l, ok := logLevels[strings.ToLower(in.Level)]
			if !ok || l == hclog.Off {
				return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("host.log.write: level %q: want trace, debug, info, warn or error", redact(in.Level))}
			}
			level = l
		}
		if in.Message == "" {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "host.log.write: message is required"}
		}
		args := make([]any, 0, 2*len(in.Fields))
		for _, k := range slices.Sorted(maps.Keys(in.Fields)) {
			args = append(args, redact(k), fieldValue(in.Fields[k], redact))
		}
		log.Named(call.Caller).Log(level, redact(in.Message), args...)
		return nil, nil
	}, nil
}

// fieldValue is a field of a host.log line: a string or a number as it
// is, true, false and null as such, an object or array as its compact
// JSON text; every string redacted.
func fieldValue(raw json.RawMessage, redact func(string) string) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return redact(string(raw))
	}
	switch v := v.(type) {
	case string:
		return redact(v)
	case json.Number, bool, nil:
		return v
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return redact(string(raw))
	}
	return redact(b.String())
}
