//go:build unix

package sidecar

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/internal/wire"
)

// fakeClock is a clock that moves only by step on each reading.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

func (c *fakeClock) elapsed(since time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t.Sub(since)
}

// floodLines is how many stderr lines the flood-stderr plugin writes: 20000
// and "flood done".
const floodLines = 20001

// countFlood counts the plugin's lines in a JSON host log, and the lines
// the summaries say were suppressed.
func countFlood(t *testing.T, log string) (forwarded, suppressed, summaries int) {
	t.Helper()
	for _, l := range strings.Split(log, "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) != nil || e["@module"] != "host.flood-stderr" {
			continue
		}
		msg, _ := e["@message"].(string)
		switch {
		case strings.HasPrefix(msg, "plain line"), msg == "json line", msg == "flood done":
			forwarded++
		case strings.Contains(msg, "log lines suppressed"):
			n, _ := e["suppressed"].(float64)
			suppressed += int(n)
			summaries++
		}
	}
	return forwarded, suppressed, summaries
}

// TestLogRateLimit floods the host with 20001 stderr lines and checks that
// at most burst + rate × elapsed of them are logged, on the limiter's own
// clock, that the others are counted in "N log lines suppressed" warnings,
// and that the stderr tail still ends with the last lines.
func TestLogRateLimit(t *testing.T) {
	tests := []struct {
		name  string
		step  time.Duration // the clock's move per reading
		burst int
		rate  float64
	}{
		{name: "frozen clock: the burst only", step: 0, burst: 100, rate: 50},
		{name: "defaults, clock moving 1ms per line", step: time.Millisecond},
		{name: "small burst, fast clock", step: 10 * time.Millisecond, burst: 5, rate: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, logs := testOptions(t)
			opts.logBurst, opts.logRate = tt.burst, tt.rate
			start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			clock := &fakeClock{t: start, step: tt.step}
			opts.now = clock.now
			c, err := Start(context.Background(), installFixture(t, "flood-stderr"), opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			if _, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: "x"}); err != nil {
				t.Fatal(err)
			}
			closeClient(t, c) // the readers have ended and flushed the count
			burst, rate := float64(2*defaultLogRate), float64(defaultLogRate)
			if tt.burst != 0 {
				burst, rate = float64(tt.burst), tt.rate
			}
			forwarded, suppressed, summaries := countFlood(t, logs.String())
			bound := int(burst + rate*clock.elapsed(start).Seconds())
			if forwarded > bound || forwarded < int(burst) {
				t.Errorf("%d lines forwarded, want between the burst %v and burst + rate × elapsed = %d", forwarded, burst, bound)
			}
			if forwarded+suppressed != floodLines || summaries == 0 {
				t.Errorf("%d forwarded + %d suppressed (in %d summaries) = %d, want %d", forwarded, suppressed, summaries,
					forwarded+suppressed, floodLines)
			}
			if tail := c.StderrTail(); len(tail) != defaultStderrLines || tail[len(tail)-1] != "flood done" {
				t.Errorf("tail = %q, want the last lines", tail)
			}
		})
	}
}

// TestLogLimiterSummary drives the limiter alone: lines over the burst are
// suppressed until the clock refills the bucket, and the summary says how
// many, once.
func TestLogLimiterSummary(t *testing.T) {
	var logs logBuffer
	clock := &fakeClock{t: time.Unix(0, 0)}
	l := newLogLimiter(hclog.New(&hclog.LoggerOptions{Output: &logs, JSONFormat: true}),
		Options{logBurst: 3, logRate: 2, logSummaryInterval: time.Hour, now: clock.now})
	var got []bool
	for range 5 {
		got = append(got, l.allow())
	}
	clock.mu.Lock()
	clock.t = clock.t.Add(time.Second) // two more lines
	clock.mu.Unlock()
	for range 3 {
		got = append(got, l.allow())
	}
	want := []bool{true, true, true, false, false, true, true, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("allow = %v, want %v", got, want)
		}
	}
	l.flush()
	l.flush()
	if s := logs.String(); strings.Count(s, "suppressed") != 2 || !strings.Contains(s, `"@message":"3 log lines suppressed`) {
		t.Errorf("log = %s, want one summary of 3 lines", s)
	}
}

// TestWideLogLines: a plugin's line cannot make the host log more than
// maxStderrLine bytes of its text at once. A log notification and an
// hclog JSON line on stderr larger than that are logged cut, at their
// level, without their fields, saying how many bytes were cut; a warning
// quotes at most a few bytes of an id the plugin made up.
func TestWideLogLines(t *testing.T) {
	opts, logs := testOptions(t)
	sent := make(chan struct{}, 1)
	opts.OnNotify = func(_ *Client, event string, _ json.RawMessage) {
		if event == "sent" {
			sent <- struct{}{}
		}
	}
	c, err := Start(context.Background(), addPackage(t, t.TempDir(), "wide", plugintest.FaultyManifest("wide", "wide-lines", false)), opts)
	if err != nil {
		t.Fatal(err)
	}
	recv(t, sent, `notify "sent"`)
	closeClient(t, c)
	cut := map[string]float64{}
	var warnings int
	for _, l := range strings.Split(logs.String(), "\n") {
		if len(l) > maxStderrLine+1024 {
			t.Errorf("a host log line of %d bytes: %.200s...", len(l), l)
		}
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		msg, _ := e["@message"].(string)
		switch {
		case strings.HasPrefix(msg, "wide"):
			n, _ := e["cut"].(float64)
			cut[msg[:min(len(msg), 9)]] = n
			if e["@level"] != "warn" || e["wide"] != nil {
				t.Errorf("a cut line at %v with its fields: %.200s", e["@level"], l)
			}
		case msg == "dropping a malformed message":
			warnings++
		}
	}
	// The message cut to maxStderrLine, then the 1 MiB field; the JSON
	// line's message whole, its 200 KiB field not.
	if len(cut) != 2 || cut["wide wwww"] < 1<<20 || cut["wide json"] < 200<<10 {
		t.Errorf("cut lines %v, want the log notification's and the JSON line's, each cut by its field at least", cut)
	}
	if warnings != 2 {
		t.Errorf("%d warnings about malformed messages, want 2 (the response, the chunk)", warnings)
	}
}
