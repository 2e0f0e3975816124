// Command memory is a demo plugin: it claims the host's context.compactor
// slot (keeping the most recent messages) and offers a UI action.
package main

import (
	"context"
	"encoding/json"

	"github.com/extkernel/extkernel/sdk"
)

const keep = 3

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
	p.Action("forget", "Forget this conversation", "command-palette", func(context.Context, json.RawMessage) (any, error) {
		p.Logger().Info("forgetting the conversation")
		return map[string]string{"status": "forgotten"}, nil
	})
	p.Serve()
}
