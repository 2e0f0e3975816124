package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/extkernel/extkernel/protocol"
)

// The caller plugin is the plugin the call tests play the host against,
// written once per SDK with the same behaviour: here in Go (served
// in-process, or as a real process by the test binary itself, see
// TestMain), and as testdata/caller.py and testdata/caller.js.
//
//   - provider "relay" calls the capability method its input names
//     (relayInput) from its handler, with the handler's context, and
//     answers with a report of the outcome (relayReport); only a
//     cancellation of its own request ends it with an error;
//   - provider "background" starts the same call outside any handler,
//     answers "started" at once, and sends the report in a notify
//     "background" once the call ended;
//   - provider "echo" answers its input;
//   - provider "late" (Python and Node.js only; the Go SDK's case is
//     TestNoCallAfterItsParentAnswered) makes the relay call once its own
//     request was answered and sends the report in a notify "late": in
//     Node.js from a timer its handler left after answering "started", in
//     Python from its handler, whose capability/call write a test hook
//     holds until the host's $/cancel of the request was answered.

// callerHelperEnv names the caller plugin a test binary started with it
// serves on its stdio instead of running tests.
const callerHelperEnv = "EXTKERNEL_SDK_TEST_PLUGIN"

// relayInput is the input of relay and background.
type relayInput struct {
	Capability string          `json:"capability"`
	Method     string          `json:"method"`
	Input      json.RawMessage `json:"input,omitempty"`
	TimeoutMS  int             `json:"timeout_ms,omitempty"` // > 0: the call's own deadline
}

// relayReport is what relay answers: the call's output, the code and
// message of the host's error answer, the message of a local refusal, or
// that the call's own deadline passed.
type relayReport struct {
	Got     *json.RawMessage `json:"got,omitempty"`
	Code    int              `json:"code,omitempty"`
	Message string           `json:"message,omitempty"`
	Refused string           `json:"refused,omitempty"`
	Timeout bool             `json:"timeout,omitempty"`
}

// callerPlugin returns the caller plugin. Each call's error (nil on
// success) is sent on errs when errs is not nil.
func callerPlugin(errs chan<- error) *Plugin {
	p := New("caller", "1.0.0")
	relay := func(ctx context.Context, raw json.RawMessage) (relayReport, error) {
		var in relayInput
		if err := json.Unmarshal(raw, &in); err != nil {
			return relayReport{}, Errorf(protocol.CodeInvalidParams, "relay input: %v", err)
		}
		if in.TimeoutMS > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(in.TimeoutMS)*time.Millisecond)
			defer cancel()
		}
		var input any
		if in.Input != nil {
			input = in.Input
		}
		out, err := p.Call(ctx, in.Capability, in.Method, input)
		if errs != nil {
			errs <- err
		}
		return report(out, err)
	}
	p.Provider("relay", "calls the capability method its input names", func(ctx context.Context, in json.RawMessage) (any, error) {
		return relay(ctx, in)
	})
	p.Provider("background", "makes the same call outside any handler", func(_ context.Context, in json.RawMessage) (any, error) {
		go func() {
			r, err := relay(context.Background(), in)
			if err != nil {
				r = relayReport{Refused: err.Error()}
			}
			_ = p.Notify("background", r)
		}()
		return "started", nil
	})
	p.Provider("echo", "answers its input", func(_ context.Context, in json.RawMessage) (any, error) { return in, nil })
	return p
}

// report is relay's answer for a call's outcome.
func report(out json.RawMessage, err error) (relayReport, error) {
	var pe *protocol.Error
	switch {
	case err == nil:
		if out == nil {
			out = json.RawMessage("null")
		}
		return relayReport{Got: &out}, nil
	case errors.As(err, &pe):
		return relayReport{Code: pe.Code, Message: pe.Message}, nil
	case errors.Is(err, ErrNotServing), errors.Is(err, ErrHandshakeIncomplete), errors.Is(err, ErrCallsUnsupported):
		return relayReport{Refused: err.Error()}, nil
	case errors.Is(err, context.DeadlineExceeded):
		return relayReport{Timeout: true}, nil
	}
	return relayReport{}, err
}

// serveCallerHelper serves the caller plugin on stdio and exits, when the
// test binary was started as the plugin; otherwise it returns.
func serveCallerHelper() {
	if os.Getenv(callerHelperEnv) != "caller" {
		return
	}
	callerPlugin(nil).Serve()
}
