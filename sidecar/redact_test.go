//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

const (
	testSecret = "s3cr3t-TOKEN-42"
	// escapedSecret is testSecret as the leak-secret plugin escapes it in
	// a JSON stderr line.
	escapedSecret = `s3cr3t\u002dTOKEN\u002d42`
	redacted      = "[REDACTED]"
)

func redactSecret(s string) string { return strings.ReplaceAll(s, testSecret, redacted) }

// TestRedact runs the leak-secret plugin, which writes the secret from its
// config to stderr (plain and hclog JSON, escaped), log notifications,
// error answers and stdout, and checks that neither the host's log nor any
// error ever holds the secret, while "[REDACTED]" shows where it was.
func TestRedact(t *testing.T) {
	tests := []struct {
		name  string
		fail  string // "initialize": the plugin fails its handshake
		ref   string // the call that leaks
		check func(t *testing.T, c *Client, err error)
	}{
		{name: "crash", ref: "crash", check: func(t *testing.T, c *Client, err error) {
			var ce *CrashError
			if !errors.As(err, &ce) || ce.ExitStatus != "exit status 2" {
				t.Fatalf("err = %v, want a crash", err)
			}
			if !strings.Contains(ce.Error(), "panic: bad token "+redacted) {
				t.Errorf("crash = %v, want the redacted panic line", ce)
			}
		}},
		{name: "error answer", ref: "error", check: func(t *testing.T, c *Client, err error) {
			var pe *protocol.Error
			if !errors.As(err, &pe) || pe.Message != "rejected "+redacted {
				t.Errorf("err = %v, want the redacted error answer", err)
			}
		}},
		{name: "stdout", ref: "stdout", check: func(t *testing.T, c *Client, err error) {
			var fe *wire.FrameError
			if !errors.Is(err, ErrProtocol) || !errors.As(err, &fe) || !strings.Contains(fe.Quote, "debug: token "+redacted) {
				t.Errorf("err = %v, want ErrProtocol quoting the redacted line", err)
			}
		}},
		{name: "initialize", fail: "initialize", check: func(t *testing.T, c *Client, err error) {
			var se *StartError
			if !errors.As(err, &se) || se.Phase != phaseHandshake {
				t.Fatalf("err = %v, want a handshake StartError", err)
			}
			if !strings.Contains(err.Error(), "bad token "+redacted) || !strings.Contains(err.Error(), "fatal: token "+redacted+" was refused") {
				t.Errorf("err = %v, want the redacted answer and stderr line", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, logs := testOptions(t)
			opts.Redact = redactSecret
			opts.Config, _ = json.Marshal(map[string]string{"secret": testSecret, "fail": tt.fail})
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Start(ctx, installFixture(t, "leak-secret"), opts)
			var texts []string
			if tt.fail == "" {
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: tt.ref})
				closeClient(t, c) // every log line is written once Close returns
				texts = append(texts, c.StderrTail()...)
				if c.Err() != nil {
					texts = append(texts, c.Err().Error())
				}
			}
			if err == nil {
				t.Fatal("no error")
			}
			tt.check(t, c, err)
			texts = append(texts, err.Error())
			var se *StartError
			if errors.As(err, &se) {
				texts = append(texts, se.Stderr...)
			}
			log := logs.String()
			texts = append(texts, strings.Split(log, "\n")...)
			for _, s := range texts {
				if strings.Contains(s, testSecret) || strings.Contains(s, escapedSecret) {
					t.Errorf("the secret leaked: %s", s)
				}
			}
			if tt.fail == "" {
				for _, want := range []string{
					`"@message":"using [REDACTED]"`, // log notification
					`"nested":{"[REDACTED]":"as a key","list":["[REDACTED]",1]}`,
					`"token":"[REDACTED]"`,
					`"@message":"token=[REDACTED]"`,           // plain stderr line
					`"@message":"auth failed for [REDACTED]"`, // JSON stderr line
				} {
					if !strings.Contains(log, want) {
						t.Errorf("log lacks %s", want)
					}
				}
			}
		})
	}
}

// TestRedactControl checks that the leak-secret plugin does leak without a
// Redact function, so that TestRedact proves something.
func TestRedactControl(t *testing.T) {
	opts, logs := testOptions(t)
	opts.Config, _ = json.Marshal(map[string]string{"secret": testSecret})
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	c, err := Start(ctx, installFixture(t, "leak-secret"), opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "crash"})
	closeClient(t, c)
	if err == nil || !strings.Contains(err.Error(), testSecret) || !strings.Contains(logs.String(), testSecret) {
		t.Errorf("without Redact the secret is not in the crash (%v) or the log", err)
	}
	if !strings.Contains(strings.Join(c.StderrTail(), "\n"), escapedSecret) {
		t.Errorf("without Redact the tail lacks the escaped secret: %q", c.StderrTail())
	}
}
