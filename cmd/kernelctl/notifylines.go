package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxNotifyName bounds the bytes of a notify's event name that run
// shows (and queues); a longer name is cut, with "…".
const maxNotifyName = 200

// notifyLimiter decides which notifies run prints a line for: each plugin
// has a token bucket of rate tokens, refilled at rate a second by the
// notifies' own times (observe.Event.Time), so that a flooding plugin
// gets rate lines a second and the kernel's other events are never held
// up behind its lines. The notifies it hides are counted per plugin;
// report returns the counts as lines, at most once a second (the printer
// asks when pending fires).
//
// Concurrency: allow is called from the kernel's Subscribe callback,
// report from the printer's goroutine; both take mu.
type notifyLimiter struct {
	rate    float64
	pending chan struct{} // capacity 1: a notify was hidden since the last report
	mu      struct {
		sync.Mutex
		plugins map[string]*notifyBucket
	}
}

type notifyBucket struct {
	tokens float64
	last   time.Time // of the last refill
	hidden uint64    // since the last report
}

func newNotifyLimiter(rate int) *notifyLimiter {
	l := &notifyLimiter{rate: float64(rate), pending: make(chan struct{}, 1)}
	l.mu.plugins = map[string]*notifyBucket{}
	return l
}

// allow reports whether plugin's notify at t gets a line, and counts it
// hidden when not.
func (l *notifyLimiter) allow(plugin string, t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.mu.plugins[plugin]
	if b == nil {
		b = &notifyBucket{tokens: l.rate, last: t}
		l.mu.plugins[plugin] = b
	}
	if d := t.Sub(b.last); d > 0 {
		b.tokens = min(l.rate, b.tokens+d.Seconds()*l.rate)
		b.last = t
	}
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	b.hidden++
	select {
	case l.pending <- struct{}{}:
	default:
	}
	return false
}

// report returns a line per plugin with hidden notifies, in plugin
// order, and resets their counts.
func (l *notifyLimiter) report() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lines []string
	for _, plugin := range slices.Sorted(maps.Keys(l.mu.plugins)) {
		if b := l.mu.plugins[plugin]; b.hidden > 0 {
			lines = append(lines, fmt.Sprintf("notify %s: %d notifies not shown (over %g a second)", plugin, b.hidden, l.rate))
			b.hidden = 0
		}
	}
	return lines
}

// notifyName is a notify's event name as run shows it: at most
// maxNotifyName bytes, cut at a rune, and quoted when it holds a
// character that is not printable (a terminal escape, a newline).
func notifyName(name string) string {
	if len(name) > maxNotifyName {
		cut := maxNotifyName
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut] + "…"
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	if name == "" {
		return `""`
	}
	return name
}
