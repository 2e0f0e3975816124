// Command redactor is a demo plugin: it redacts secrets from prompts and tool
// arguments before they leave the host, logs each redaction through the
// host.log capability it requires (a call the host serves), and offers
// redaction as a provider of text.redact.
package main

import (
	"context"
	"encoding/json"
	"regexp"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

var secret = regexp.MustCompile(`(sk-[A-Za-z0-9]{8,}|password=[^\s"]+)`)

func redact(s string) string { return secret.ReplaceAllString(s, "[REDACTED]") }

func main() {
	p := sdk.New("redactor", "1.2.0")
	p.Provide("text.redact", "1.2.0")
	intercept := func(ctx context.Context, point string, payload json.RawMessage) (protocol.InterceptResult, error) {
		out := redact(string(payload))
		if out == string(payload) {
			return sdk.Continue(), nil
		}
		logRedaction(ctx, p, point)
		return sdk.Modify(json.RawMessage(out)), nil
	}
	p.Intercept("prompt.submit", intercept)
	p.Intercept("tool.before", intercept)
	p.Provider("redact", "Redacts secrets from a JSON string.", func(_ context.Context, in json.RawMessage) (any, error) {
		var s string
		if err := json.Unmarshal(in, &s); err != nil {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "input must be a JSON string"}
		}
		return redact(s), nil
	})
	p.Serve()
}

// logRedaction logs that a secret was redacted at point through the
// host's host.log (method write), or on stderr when the host does not
// serve it.
func logRedaction(ctx context.Context, p *sdk.Plugin, point string) {
	line := map[string]any{"level": "info", "message": "redacted a secret", "fields": map[string]string{"point": point}}
	if _, err := p.Call(ctx, "host.log", "write", line); err != nil {
		p.Logger().Info("redacted a secret", "point", point, "host.log", err.Error())
	}
}
