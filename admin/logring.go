package admin

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults of LogRingOptions.
const (
	defaultRingLines = 1000
	defaultRingBytes = 2 << 20
	// maxLogMessage bounds one kept message, in bytes; the sidecar already
	// cuts stderr lines at 16 KiB.
	maxLogMessage = 16 << 10
	// maxLogFields bounds the fields kept per line.
	maxLogFields = 64
)

// KernelSource is the LogLine.Plugin of the kernel's own lines (its logger
// is named "kernel" under the root). A plugin named "kernel" would log
// under the same name: its lines and the kernel's share one ring.
const KernelSource = "kernel"

// LogRingOptions configure a LogRing. The zero value keeps the last 1000
// lines of each plugin, of at most 2 MiB in all, at info and above, from a
// root logger with no name.
type LogRingOptions struct {
	// Root is the name of the logger the kernel was given
	// (config.Config.Logger): the kernel names its own logger Root.kernel
	// and each plugin's Root.<plugin>. Lines of Root itself are not kept.
	Root string
	// Lines is how many lines are kept per plugin (default 1000).
	Lines int
	// Bytes bounds the lines kept per plugin in bytes (default 2 MiB),
	// each line counted as its message, its fields' keys and values and a
	// fixed 256 bytes: the oldest are forgotten first. A line larger than
	// Bytes on its own is not kept (followers still receive it).
	Bytes int64
	// Level is the lowest level kept (default info).
	Level hclog.Level
}

// LogRing keeps the recent log lines of every plugin, each plugin in a
// bounded ring. It is an hclog.SinkAdapter: register it on the
// hclog.InterceptLogger given to the kernel as config.Config.Logger, and
// every line of the kernel's per-plugin sub-loggers (the plugin's stderr
// and its log notifications, already redacted) lands in it, with its
// level, time, message and fields.
//
// # Concurrency
//
// A LogRing is safe for concurrent use. Accept takes one short lock and
// never blocks: a follower whose buffer is full is dropped (its channel
// closed), never waited for. A LogRing starts no goroutine.
type LogRing struct {
	opts LogRingOptions

	mu struct {
		sync.Mutex
		rings     map[string]*ring[LogLine]
		followers map[*follower[LogLine]]struct{}
	}
}

// NewLogRing returns an empty LogRing.
func NewLogRing(opts LogRingOptions) *LogRing {
	if opts.Lines <= 0 {
		opts.Lines = defaultRingLines
	}
	if opts.Bytes <= 0 {
		opts.Bytes = defaultRingBytes
	}
	if opts.Level == hclog.NoLevel {
		opts.Level = hclog.Info
	}
	r := &LogRing{opts: opts}
	r.mu.rings = map[string]*ring[LogLine]{}
	r.mu.followers = map[*follower[LogLine]]struct{}{}
	return r
}

// Accept records one log line; it implements hclog.SinkAdapter. name is
// the full name of the logger that logged it.
func (r *LogRing) Accept(name string, level hclog.Level, msg string, args ...any) {
	if level < r.opts.Level || level == hclog.Off {
		return
	}
	source, ok := r.source(name)
	if !ok {
		return
	}
	if len(msg) > maxLogMessage {
		msg = msg[:maxLogMessage] + "…"
	}
	line := LogLine{Time: time.Now(), Plugin: source, Level: levelName(level), Message: msg, Fields: fields(args)}
	r.mu.Lock()
	defer r.mu.Unlock()
	rg := r.mu.rings[source]
	if rg == nil {
		rg = newRing[LogLine](r.opts.Lines, r.opts.Bytes)
		r.mu.rings[source] = rg
	}
	rg.add(line)
	for f := range r.mu.followers {
		if !f.offer(line) {
			delete(r.mu.followers, f)
		}
	}
}

// source returns the plugin (or KernelSource) a logger name stands for:
// the first name segment under the root.
func (r *LogRing) source(name string) (string, bool) {
	rest := name
	if r.opts.Root != "" {
		var ok bool
		if rest, ok = strings.CutPrefix(name, r.opts.Root+"."); !ok {
			return "", false
		}
	}
	source, _, _ := strings.Cut(rest, ".")
	return source, source != ""
}

// sources returns the plugins (and KernelSource) with lines kept, sorted.
func (r *LogRing) sources() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.mu.rings))
}

// LogQuery selects log lines. The zero value selects every kept line.
type LogQuery struct {
	// Plugin keeps only that plugin's lines (KernelSource: the kernel's).
	Plugin string
	// Level keeps lines at that level and above (NoLevel: all kept).
	Level hclog.Level
	// Since keeps lines logged at or after it (zero: all).
	Since time.Time
}

// match reports whether q selects l.
func (q LogQuery) match(l LogLine) bool {
	return (q.Plugin == "" || l.Plugin == q.Plugin) &&
		(q.Level == hclog.NoLevel || hclog.LevelFromString(l.Level) >= q.Level) &&
		(q.Since.IsZero() || !l.Time.Before(q.Since))
}

// Lines returns the kept lines q selects, oldest first (lines of different
// plugins merged by time, ties in plugin order).
func (r *LogRing) Lines(q LogQuery) []LogLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.linesLocked(q)
}

func (r *LogRing) linesLocked(q LogQuery) []LogLine {
	var out []LogLine
	for _, name := range slices.Sorted(maps.Keys(r.mu.rings)) {
		for _, l := range r.mu.rings[name].all() {
			if q.match(l) {
				out = append(out, l)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b LogLine) int { return a.Time.Compare(b.Time) })
	return out
}

// follow returns the kept lines q selects and a follower that receives
// every later line (unfiltered) until it is cancelled or falls behind by
// n lines or maxBytes.
func (r *LogRing) follow(q LogQuery, n int, maxBytes int64) ([]LogLine, *follower[LogLine], func()) {
	f := newFollower[LogLine](n, maxBytes)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.followers[f] = struct{}{}
	return r.linesLocked(q), f, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.mu.followers, f)
	}
}

// size is what a line is counted for in a ring and a follower: its
// texts, its fields' keys and values (a value that is not text or JSON
// as 16 bytes) and lineOverhead.
func (l LogLine) size() int64 {
	n := lineOverhead + len(l.Plugin) + len(l.Level) + len(l.Message)
	for k, v := range l.Fields {
		n += len(k)
		switch v := v.(type) {
		case string:
			n += len(v)
		case json.RawMessage:
			n += len(v)
		default:
			n += 16
		}
	}
	return int64(n)
}

// levelName is the lower-case name of l.
func levelName(l hclog.Level) string {
	if l == hclog.Warn {
		return "warn"
	}
	return strings.ToLower(l.String())
}

// fields turns hclog key/value args into a JSON-encodable map: errors and
// Stringers by their text, other values encodable to JSON as they are,
// anything else formatted with %v. A key without a value gets the value
// "(missing)", as hclog prints it.
func fields(args []any) map[string]any {
	if len(args) == 0 {
		return nil
	}
	out := make(map[string]any, len(args)/2+1)
	for i := 0; i < len(args) && len(out) < maxLogFields; i += 2 {
		key := fmt.Sprint(args[i])
		if i+1 >= len(args) {
			out[key] = "(missing)"
			break
		}
		out[key] = fieldValue(args[i+1])
	}
	return out
}

func fieldValue(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, json.RawMessage:
		return x
	case error:
		return x.Error()
	case time.Duration:
		return x.String()
	case fmt.Stringer:
		return x.String()
	case encoding.TextMarshaler:
		if b, err := x.MarshalText(); err == nil {
			return string(b)
		}
	}
	if b, err := json.Marshal(v); err == nil && len(b) <= maxLogMessage {
		return json.RawMessage(b)
	}
	return fmt.Sprintf("%v", v)
}
