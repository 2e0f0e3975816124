// Command polyglot is the Go one of three test plugins that behave alike,
// each written with its language's SDK as a plugin author would: this one
// on package sdk, polyglot.py on the Python SDK, polyglot.js on the
// Node.js SDK. The kernel tests run them against each other to call across
// languages (capability/call, protocol 1.1).
//
// Each takes its name and version from EXTKERNEL_PLUGIN_NAME and
// EXTKERNEL_PLUGIN_VERSION, provides the capabilities POLYGLOT_PROVIDES
// lists ("key@version,..."), and declares one provider, "run", whose input
// is a script, an object whose members it acts on in this order (all
// optional):
//
//	"notify": "event"  send the notify event with data
//	                   {"plugin": name, "lang": lang}
//	"block": true      wait until the request is cancelled, send the
//	                   notify "cancelled" (same data), and answer -32800
//	"call": {"capability": k, "method": m, "input": any}
//	                   call method m of capability k through the SDK,
//	                   from the handler (so the call names the request as
//	                   its parent), and answer {"output": out} or
//	                   {"error": {"code": c, "message": s}, "type": t},
//	                   t naming the SDK's error type: "*protocol.Error",
//	                   or "ProtocolError" in Python and Node.js
//	"read": "/path"    read the file itself and answer {"read": content}
//	                   or {"read_error": the error's text}: what its
//	                   confinement lets it reach directly
//	"work": {"ms": n, "every": m}
//	                   work n milliseconds (until cancelled when 0),
//	                   reporting progress every m milliseconds (none when
//	                   0; protocol 1.3), then answer {"worked": lang};
//	                   -32800 when cancelled first
//	"features": true   answer {"host_features": [...], "lang": lang}: the
//	                   names of the features (protocol 1.4) the SDK says
//	                   the host supports, of the six and one unknown
//	"progress": n      send n progress notifications (protocol 1.3; the
//	                   SDK sends them only to a host that supports it),
//	                   then answer {"progressed": n}
//	"loop": n          with call (Go only): make the call n times in a
//	                   row and answer {"ns": [...]}, the duration of each
//	                   call in nanoseconds as the plugin measured it
//	otherwise          answer {"echo": echo, "lang": lang, "plugin": name}
//
// lang is "go", "python" or "node".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

const lang = "go"

var name = os.Getenv("EXTKERNEL_PLUGIN_NAME")

type script struct {
	Notify   string          `json:"notify"`
	Block    bool            `json:"block"`
	Call     *callSpec       `json:"call"`
	Read     string          `json:"read"`
	Work     *workSpec       `json:"work"`
	Loop     int             `json:"loop"`
	Features bool            `json:"features"`
	Progress int             `json:"progress"`
	Echo     json.RawMessage `json:"echo"`
}

// workSpec is a script's work: its duration and the period of its
// progress, in milliseconds.
type workSpec struct {
	MS    int `json:"ms"`
	Every int `json:"every"`
}

type callSpec struct {
	Capability string          `json:"capability"`
	Method     string          `json:"method"`
	Input      json.RawMessage `json:"input"`
}

func main() {
	p := sdk.New(name, os.Getenv("EXTKERNEL_PLUGIN_VERSION"))
	if v := os.Getenv("POLYGLOT_PROVIDES"); v != "" {
		for _, kv := range strings.Split(v, ",") {
			key, version, _ := strings.Cut(kv, "@")
			p.Provide(key, version)
		}
	}
	p.Provider("run", "runs its input as a script", func(ctx context.Context, in json.RawMessage) (any, error) {
		return run(ctx, p, in)
	})
	p.Serve()
}

// run acts on one script.
func run(ctx context.Context, p *sdk.Plugin, in json.RawMessage) (any, error) {
	var s script
	if err := json.Unmarshal(in, &s); err != nil {
		return nil, sdk.Errorf(protocol.CodeInvalidParams, "polyglot: input is not a script: %v", err)
	}
	if s.Notify != "" {
		notify(p, s.Notify)
	}
	switch {
	case s.Block:
		<-ctx.Done()
		notify(p, "cancelled")
		return nil, sdk.Errorf(protocol.CodeRequestCancelled, "polyglot: cancelled")
	case s.Read != "":
		data, err := os.ReadFile(s.Read)
		if err != nil {
			return map[string]string{"read_error": err.Error()}, nil
		}
		return map[string]string{"read": string(data)}, nil
	case s.Work != nil:
		return work(ctx, *s.Work)
	case s.Features:
		supported := []string{}
		for _, f := range []string{sdk.FeatureCalls, sdk.FeatureCancel, sdk.FeatureContributions, sdk.FeatureProgress,
			sdk.FeatureStreams, sdk.FeatureTrace, "telepathy"} {
			if p.HostSupports(f) {
				supported = append(supported, f)
			}
		}
		return map[string]any{"host_features": supported, "lang": lang}, nil
	case s.Progress > 0:
		for range s.Progress {
			if err := sdk.Progress(ctx, "step", -1); err != nil {
				return nil, err
			}
		}
		return map[string]int{"progressed": s.Progress}, nil
	case s.Call != nil && s.Loop > 0:
		return loop(ctx, p, s)
	case s.Call != nil:
		out, err := p.Call(ctx, s.Call.Capability, s.Call.Method, input(s.Call.Input))
		var pe *protocol.Error
		switch {
		case errors.As(err, &pe):
			return map[string]any{"error": pe, "type": fmt.Sprintf("%T", pe)}, nil
		case err != nil:
			return nil, err
		}
		return map[string]json.RawMessage{"output": out}, nil
	}
	return map[string]any{"echo": s.Echo, "lang": lang, "plugin": name}, nil
}

// work runs a script's work.
func work(ctx context.Context, w workSpec) (any, error) {
	var end <-chan time.Time
	if w.MS > 0 {
		end = time.After(time.Duration(w.MS) * time.Millisecond)
	}
	var tick <-chan time.Time
	if w.Every > 0 {
		t := time.NewTicker(time.Duration(w.Every) * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-end:
			return map[string]string{"worked": lang}, nil
		case <-ctx.Done():
			return nil, sdk.Errorf(protocol.CodeRequestCancelled, "polyglot: cancelled")
		case <-tick:
			if err := sdk.Progress(ctx, "working", -1); err != nil {
				return nil, err
			}
		}
	}
}

// loop makes the script's call s.Loop times in a row, timing each.
func loop(ctx context.Context, p *sdk.Plugin, s script) (any, error) {
	ns := make([]int64, s.Loop)
	in := input(s.Call.Input)
	for i := range ns {
		began := time.Now()
		if _, err := p.Call(ctx, s.Call.Capability, s.Call.Method, in); err != nil {
			return nil, err
		}
		ns[i] = time.Since(began).Nanoseconds()
	}
	return map[string][]int64{"ns": ns}, nil
}

// input is a call's input: none when the script gives none.
func input(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

func notify(p *sdk.Plugin, event string) {
	if err := p.Notify(event, map[string]string{"plugin": name, "lang": lang}); err != nil {
		p.Logger().Error("notify", "event", event, "error", err)
	}
}
