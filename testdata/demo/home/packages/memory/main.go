// Command memory is a demo plugin: it claims the host's context.compactor
// slot (keeping the most recent messages), remembers and recalls notes
// through the storage.kv capability it requires (calls the kernel routes
// to kvstore's providers), redacting each note first through the optional
// text.redact, and offers a UI action.
package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

const keep = 3

// note is the input of remember and recall (which ignores Note).
type note struct {
	Topic string `json:"topic"`
	Note  string `json:"note"`
}

// key is where the note on topic is stored in storage.kv.
func key(topic string) string { return "memory/" + topic }

func main() {
	p := sdk.New("memory", "0.3.0")
	p.Provide("agent.memory", "0.3.0")
	p.Strategy("context.compactor", func(_ context.Context, in json.RawMessage) (any, error) {
		var msgs []json.RawMessage
		if err := json.Unmarshal(in, &msgs); err != nil {
			return nil, err
		}
		if len(msgs) > keep {
			msgs = msgs[len(msgs)-keep:]
		}
		return msgs, nil
	})
	p.Provider("remember", `Stores a note on a topic in storage.kv: {"topic": ..., "note": ...}.`, func(ctx context.Context, in json.RawMessage) (any, error) {
		n, err := decode(in)
		if err != nil {
			return nil, err
		}
		text, err := redact(ctx, p, n.Note)
		if err != nil {
			return nil, err
		}
		// The handler's ctx makes this request the call's parent: the
		// call gets its deadline and is cancelled with it.
		if _, err := p.Call(ctx, "storage.kv", "put", map[string]string{"key": key(n.Topic), "value": text}); err != nil {
			return nil, err
		}
		return map[string]string{"remembered": n.Topic}, nil
	})
	p.Provider("recall", `Recalls the note on a topic from storage.kv: {"topic": ...}.`, func(ctx context.Context, in json.RawMessage) (any, error) {
		n, err := decode(in)
		if err != nil {
			return nil, err
		}
		text, err := p.Call(ctx, "storage.kv", "get", key(n.Topic))
		if err != nil {
			return nil, err
		}
		return map[string]json.RawMessage{"recalled": text}, nil
	})
	p.Action("forget", "Forget this conversation", "command-palette", func(context.Context, json.RawMessage) (any, error) {
		p.Logger().Info("forgetting the conversation")
		return map[string]string{"status": "forgotten"}, nil
	})
	p.Serve()
}

// decode reads a note, which must name its topic.
func decode(in json.RawMessage) (note, error) {
	var n note
	if err := json.Unmarshal(in, &n); err != nil || n.Topic == "" {
		return n, sdk.Errorf(protocol.CodeInvalidParams, `input must be {"topic": string, "note"?: string}`)
	}
	return n, nil
}

// redact passes text through text.redact, an optional requirement: when
// no package provides it, the text is kept as it is.
func redact(ctx context.Context, p *sdk.Plugin, text string) (string, error) {
	out, err := p.Call(ctx, "text.redact", "redact", text)
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Code == protocol.CodeNotAvailable {
		return text, nil
	}
	if err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(out, &s); err != nil {
		return "", sdk.Errorf(protocol.CodePluginError, "text.redact answered %s, not a string", out)
	}
	return s, nil
}
