//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/plugintest"
)

// countWarnings counts the host's warnings about malformed messages in a
// JSON host log, and the lines its summaries say were suppressed.
func countWarnings(log string) (warned, suppressed int) {
	for _, l := range strings.Split(log, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		msg, _ := e["@message"].(string)
		switch {
		case msg == "dropping a malformed message":
			warned++
		case strings.Contains(msg, "log lines suppressed"):
			n, _ := e["suppressed"].(float64)
			suppressed += int(n)
		}
	}
	return warned, suppressed
}

// TestMalformedMessages starts real plugins that send the host 1000
// well-framed but malformed messages of eight kinds (params that do not
// decode, answers, chunks and progress for ids the host never sent). One that sends
// nothing else is stopped for breaking the protocol once it reaches the
// limit; one that sends a well-formed message after each keeps running.
// Either way the host logs no more warnings than the plugin's log rate
// allows: the rest are counted.
func TestMalformedMessages(t *testing.T) {
	tests := []struct {
		mode  string
		limit uint64
		stops bool
	}{
		{mode: "garbage", stops: true},           // the default limit, 100
		{mode: "garbage", limit: 7, stops: true}, // a limit from config
		{mode: "garbage-mixed", limit: 7},        // never more bad than good
		{mode: "garbage-mixed", limit: 1000, stops: false},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			opts, logs := testOptions(t)
			opts.Limits.MalformedMessages = tt.limit
			opts.logRate, opts.logBurst = 0.001, 20 // the burst only: a frozen budget
			sent := make(chan struct{}, 1)
			opts.OnNotify = func(_ *Client, event string, _ json.RawMessage) {
				if event == "sent" {
					sent <- struct{}{}
				}
			}
			c, err := Start(context.Background(), addPackage(t, t.TempDir(), "garbage", plugintest.FaultyManifest("garbage", tt.mode, false)), opts)
			if err != nil {
				t.Fatal(err)
			}
			limit := int(tt.limit)
			if limit == 0 {
				limit = defaultMaxMalformed
			}
			if tt.stops {
				recv(t, c.Done(), "the plugin's stop")
				err := c.Err()
				if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "malformed messages more than well-formed ones") {
					t.Fatalf("client error = %v, want a protocol violation for malformed messages", err)
				}
				closeClient(t, c)
				if warned, _ := countWarnings(logs.String()); warned != min(limit-1, 20) {
					t.Errorf("%d warnings logged, want %d (limit %d, burst 20)", warned, min(limit-1, 20), limit)
				}
				return
			}
			recv(t, sent, `notify "sent"`)
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			if err := ping(c, ctx); err != nil {
				t.Fatalf("the plugin was stopped: %v", err)
			}
			closeClient(t, c)
			warned, suppressed := countWarnings(logs.String())
			if warned > 20 {
				t.Errorf("%d warnings logged for 1000 malformed messages, more than the burst of 20", warned)
			}
			// The 1000 debug lines between the garbage share the budget.
			if warned+suppressed < 1000 {
				t.Errorf("%d warnings logged and %d lines suppressed: malformed messages went uncounted", warned, suppressed)
			}
		})
	}
}
