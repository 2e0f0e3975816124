//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// secretHalves are the two halves of testSecret: a secret cut in two
// before redaction shows them.
var secretHalves = [2]string{testSecret[:len(testSecret)/2], testSecret[len(testSecret)/2:]}

// TestRedactEveryChannel makes the leak-secret plugin put the secret in
// one channel of plugin text per case (the handshake's fields, an invalid
// decision, error data, log field keys, a stderr line cut across the
// secret, a stdout quote cut across it, a method before the handshake) and
// checks that the secret, or either half of it, appears in no log line,
// error, tail line or declaration, while "[REDACTED]" shows where it was.
func TestRedactEveryChannel(t *testing.T) {
	tests := []struct {
		name      string
		handshake string // how the handshake leaks
		call      func(ctx context.Context, c *Client) error
		want      string // in the error (or the log, for a call without error)
		wantLog   string
		phase     string // the StartError's phase when the handshake fails
	}{
		{name: "declarations text", handshake: "text", call: quietCall,
			want: `"Title [REDACTED]"`}, // checked in the declarations
		{name: "plugin version", handshake: "version", call: quietCall, want: `"1.0.0+[REDACTED]"`},
		{name: "plugin name", handshake: "name", phase: phaseDeclarations, want: `calls itself "name-[REDACTED]"`},
		{name: "protocol version", handshake: "protocol", phase: phaseVersion, want: `"1.0.0-[REDACTED]"`},
		{name: "provider ref and action id", handshake: "ids", phase: phaseDeclarations,
			want: `providers[0]: ref "ref-[REDACTED]" holds secret text; actions[0]: id "act-[REDACTED]" holds secret text`},
		{name: "method before the handshake", handshake: "early", phase: phaseHandshake, want: `notification "x/[REDACTED]" sent before`},
		{name: "invalid decision", handshake: "text", call: func(ctx context.Context, c *Client) error {
			_, err := c.Intercept(ctx, "tool.before", json.RawMessage(`{}`))
			return err
		}, want: `invalid decision "allow [REDACTED]"`},
		{name: "error message and data", handshake: "text", call: func(ctx context.Context, c *Client) error {
			_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "error"})
			var pe *protocol.Error
			if !errors.As(err, &pe) {
				return err
			}
			return errors.New(pe.Message + " " + string(pe.Data))
		}, want: `rejected [REDACTED] {"[REDACTED]":[1],"token":"[REDACTED]"}`},
		{name: "log field keys, long stderr line", handshake: "text", call: quietCall,
			wantLog: `"[REDACTED]":"as a key"`},
		{name: "stdout quote", handshake: "text", call: func(ctx context.Context, c *Client) error {
			_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "stdout"})
			return err
		}, want: `debug: token [REDACTED]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, logs := testOptions(t)
			opts.Redact = redactSecret
			opts.Config, _ = json.Marshal(map[string]string{"secret": testSecret, "handshake": tt.handshake})
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Start(ctx, installFixture(t, "leak-secret"), opts)
			var texts []string
			if tt.phase != "" {
				var se *StartError
				if !errors.As(err, &se) || se.Phase != tt.phase {
					t.Fatalf("Start = %v, want a StartError in phase %s", err, tt.phase)
				}
				texts = append(texts, se.Stderr...)
			} else {
				if err != nil {
					t.Fatal(err)
				}
				decl, _ := json.Marshal(c.Declarations())
				texts = append(texts, string(decl))
				if err = tt.call(ctx, c); err == nil {
					err = errors.New(string(decl)) // what the case checks is in the declarations
				}
				closeClient(t, c) // every log line is written once Close returns
				texts = append(texts, c.StderrTail()...)
				if c.Err() != nil {
					texts = append(texts, c.Err().Error())
				}
			}
			texts = append(texts, err.Error())
			log := logs.String()
			texts = append(texts, strings.Split(log, "\n")...)
			for _, s := range texts {
				for _, leak := range []string{testSecret, escapedSecret, secretHalves[0], secretHalves[1]} {
					if strings.Contains(s, leak) {
						t.Errorf("%q leaked: %s", leak, tailString(s, 300))
					}
				}
			}
			if tt.want != "" && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to hold %s", err, tt.want)
			}
			if tt.wantLog != "" && !strings.Contains(log, tt.wantLog) {
				t.Errorf("log lacks %s", tt.wantLog)
			}
		})
	}
}

// quietCall makes the plugin leak through its log notification and stderr,
// then answer.
func quietCall(ctx context.Context, c *Client) error {
	_, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "quiet"})
	return err
}

// TestRedactStderrAcrossCut feeds one line longer than the log's piece
// size, with the secret across the cut, and lines over the read bound:
// the log shows the secret redacted, never cut in halves.
func TestRedactStderrAcrossCut(t *testing.T) {
	long := strings.Repeat("x", maxStderrLine-len(secretHalves[0])) + testSecret + strings.Repeat("y", 100)
	tooLong := strings.Repeat("z", maxStderrRecord-3) + testSecret + "tail"
	in := long + "\n" + tooLong + "\nafter\n"
	var logs logBuffer
	log := hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true})
	sink := stderrSink{log: log, tail: newTail(5), redact: redactSecret, limit: newLogLimiter(log, Options{logRate: -1})}
	forwardStderr(strings.NewReader(in), sink)
	out := logs.String()
	for _, leak := range []string{testSecret, secretHalves[0], secretHalves[1], "zzzz"} {
		if strings.Contains(out, leak) || strings.Contains(strings.Join(sink.tail.snapshot(), "\n"), leak) {
			t.Errorf("%q in the log or tail", leak)
		}
	}
	for _, want := range []string{"[REDAC", fmt.Sprintf("stderr line of %d bytes not logged", len(tooLong)+1), `"after"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, tailString(out, 500))
		}
	}
}

// TestNotifyNameRedacted: a notify's event name is a diagnostic string and
// reaches OnNotify redacted; its data is the host's and reaches it as sent.
func TestNotifyNameRedacted(t *testing.T) {
	opts, _ := testOptions(t)
	opts.Redact = redactSecret
	opts.Config, _ = json.Marshal(map[string]string{"secret": testSecret, "handshake": "text"})
	type note struct {
		event string
		data  json.RawMessage
	}
	notes := make(chan note, 4)
	opts.OnNotify = func(_ *Client, event string, data json.RawMessage) { notes <- note{event, data} }
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, installFixture(t, "leak-secret"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient(t, c)
	if err := quietCall(ctx, c); err != nil {
		t.Fatal(err)
	}
	n := recv(t, notes, "the plugin's notify")
	if n.event != "leak [REDACTED]" || string(n.data) != strconv.Quote(testSecret) {
		t.Errorf("OnNotify(%q, %s), want the name redacted and the data as sent", n.event, n.data)
	}
}
