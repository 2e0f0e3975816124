package sidecar

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// logLimiter rate-limits the log lines a client forwards from its plugin
// (stderr lines and log notifications together) with a token bucket: up
// to burst lines at once, then rate lines per second. Lines over the
// limit are counted, not logged; the count is logged as one warning at
// most once per interval, and when the client's readers end. It is safe
// for concurrent use.
type logLimiter struct {
	log      hclog.Logger
	now      func() time.Time
	burst    float64
	rate     float64 // lines per second; 0 disables limiting
	interval time.Duration

	mu         sync.Mutex
	tokens     float64
	last       time.Time   // when tokens was last refilled
	suppressed int         // lines suppressed since the last summary
	timer      *time.Timer // the pending summary, or nil
}

func newLogLimiter(log hclog.Logger, o Options) *logLimiter {
	l := &logLimiter{log: log, now: o.now, burst: float64(o.logBurst), rate: o.logRate, interval: o.logSummaryInterval}
	if l.now == nil {
		l.now = time.Now
	}
	if l.rate < 0 {
		l.rate = 0
	}
	l.tokens, l.last = l.burst, l.now()
	return l
}

// allow reports whether one more line may be logged now. A line that may
// not is counted for the next summary.
func (l *logLimiter) allow() bool {
	if l.rate == 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if d := now.Sub(l.last); d > 0 {
		l.tokens = min(l.burst, l.tokens+d.Seconds()*l.rate)
		l.last = now
	}
	if l.tokens >= 1 {
		l.tokens--
		return true
	}
	l.suppressed++
	if l.timer == nil {
		l.timer = time.AfterFunc(l.interval, l.summarize)
	}
	return false
}

// summarize logs how many lines were suppressed since the last summary,
// if any.
func (l *logLimiter) summarize() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	l.report()
}

// flush logs the pending summary now and cancels the timer: a reader of
// the plugin's output calls it when it ends.
func (l *logLimiter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.report()
}

// report logs the summary; l.mu is held.
func (l *logLimiter) report() {
	if l.suppressed == 0 {
		return
	}
	l.log.Warn(fmt.Sprintf("%d log lines suppressed (rate limit: %d at once, %g per second)", l.suppressed, int(l.burst), l.rate),
		"suppressed", l.suppressed)
	l.suppressed = 0
}
