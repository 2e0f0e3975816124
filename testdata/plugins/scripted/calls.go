package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// callInput is the input of the "call" provider: the call to make.
type callInput struct {
	Capability string          `json:"capability"`
	Method     string          `json:"method"`
	Input      json.RawMessage `json:"input,omitempty"`
}

// cycleInput is the input of the "cycle" provider: the capabilities to
// call in turn, and how many calls of the cycle came before this one.
type cycleInput struct {
	Via []string `json:"via"`
	Hop int      `json:"hop"`
}

// relayInput is the input of the "relay" provider: the stream to consume
// and how. DelayMS is the pause after each chunk (a slow consumer);
// StallMS, when set, a pause after chunk StallAt (a consumer that stops
// reading for a while), after which it cancels the stream.
type relayInput struct {
	callInput
	DelayMS int `json:"delay_ms"`
	StallAt int `json:"stall_at"`
	StallMS int `json:"stall_ms"`
}

// relayOutcome is what "relay" answers when the stream ended normally or
// the relay cancelled it: the chunks and data bytes it took, and, when a
// chunk was not the one expected, why.
type relayOutcome struct {
	Chunks int    `json:"chunks"`
	Bytes  int    `json:"bytes"`
	Bad    string `json:"bad,omitempty"`
}

// streamInput is the input of the "stream" provider: n chunks, each
// {"i": i, "pad": "xx..."} with size bytes of padding.
type streamInput struct {
	N    int `json:"n"`
	Size int `json:"size"`
}

// streamChunk is one chunk of the "stream" provider.
type streamChunk struct {
	I   int    `json:"i"`
	Pad string `json:"pad"`
}

// addCallers registers the SCRIPT_CALLS providers: call, cycle, relay and
// the streaming provider stream (see the package doc).
func addCallers(p *sdk.Plugin) {
	if os.Getenv("SCRIPT_CALLS") == "" {
		return
	}
	p.Provider("call", "makes the call its input names", func(ctx context.Context, raw json.RawMessage) (any, error) {
		var in callInput
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, sdk.Errorf(protocol.CodeInvalidParams, "call: %v", err)
		}
		out, err := p.Call(ctx, in.Capability, in.Method, in.Input)
		if err != nil {
			return nil, err
		}
		return out, nil
	})
	p.Provider("cycle", "calls the next capability of its cycle", func(ctx context.Context, raw json.RawMessage) (any, error) {
		var in cycleInput
		if err := json.Unmarshal(raw, &in); err != nil || len(in.Via) == 0 {
			return nil, sdk.Errorf(protocol.CodeInvalidParams, "cycle: input %s", raw)
		}
		next := cycleInput{Via: in.Via, Hop: in.Hop + 1}
		out, err := p.Call(ctx, in.Via[in.Hop%len(in.Via)], "cycle", next)
		if err != nil {
			return nil, err
		}
		return out, nil // never: only an error ends the cycle
	})
	p.Provider("relay", "consumes the stream its input names", func(ctx context.Context, raw json.RawMessage) (any, error) {
		var in relayInput
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, sdk.Errorf(protocol.CodeInvalidParams, "relay: %v", err)
		}
		return relay(ctx, p, in)
	})
	p.StreamProvider("stream", "streams chunks, chaotically", produce)
}

// relay consumes the stream in names as in says and answers its outcome,
// or the error that ended the stream.
func relay(ctx context.Context, p *sdk.Plugin, in relayInput) (any, error) {
	var res relayOutcome
	for data, err := range p.CallStream(ctx, in.Capability, in.Method, in.Input) {
		if err != nil {
			return nil, err
		}
		var c streamChunk
		if err := json.Unmarshal(data, &c); err != nil || c.I != res.Chunks+1 {
			res.Bad = fmt.Sprintf("chunk %d is %.80s", res.Chunks+1, data)
			return res, nil
		}
		res.Chunks++
		res.Bytes += len(data)
		if in.StallMS > 0 && res.Chunks == in.StallAt {
			pause(ctx, time.Duration(in.StallMS)*time.Millisecond)
			return res, nil // breaking out cancels the stream
		}
		if in.DelayMS > 0 && !pause(ctx, time.Duration(in.DelayMS)*time.Millisecond) {
			return nil, ctx.Err()
		}
	}
	return res, nil
}

// produce is the "stream" provider: it sends the chunks its input asks
// for, but chaos may make it slow, hang half way, fail half way, crash
// half way, or commit one of SCRIPT_FAULTS first.
func produce(ctx context.Context, raw json.RawMessage, send func(any) error) error {
	var in streamInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return sdk.Errorf(protocol.CodeInvalidParams, "stream: %v", err)
	}
	b, at := chaos(ctx), 1+rand.IntN(max(in.N, 1))
	if b == "hostile" || b == "orphan" {
		commit(b)
	}
	pad := strings.Repeat("x", in.Size)
	for i := 1; i <= in.N; i++ {
		if i == at {
			switch b {
			case "hang":
				<-ctx.Done()
				return ctx.Err()
			case "fail":
				return sdk.Errorf(protocol.CodePluginError, "failed at chunk %d on purpose", i)
			case "crash":
				os.Exit(7)
			}
		}
		if err := send(streamChunk{I: i, Pad: pad}); err != nil {
			return err
		}
	}
	return nil
}

// pause waits d, or until ctx ends; it reports whether d passed.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
