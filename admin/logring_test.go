package admin_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/admin"
)

// TestLogRingAccept: which logger names land where, at which levels, with
// which fields.
func TestLogRingAccept(t *testing.T) {
	tests := []struct {
		name   string
		logger string
		level  hclog.Level
		args   []any
		want   []admin.LogLine // Time not compared
	}{
		{name: "plugin", logger: "host.audit", level: hclog.Info, args: []any{"n", 1},
			want: []admin.LogLine{{Plugin: "audit", Level: "info", Message: "m", Fields: map[string]any{"n": 1}}}},
		{name: "kernel", logger: "host.kernel", level: hclog.Warn,
			want: []admin.LogLine{{Plugin: admin.KernelSource, Level: "warn", Message: "m"}}},
		{name: "deeper", logger: "host.audit.sub", level: hclog.Error,
			want: []admin.LogLine{{Plugin: "audit", Level: "error", Message: "m"}}},
		{name: "root-itself", logger: "host", level: hclog.Error},
		{name: "other-root", logger: "other.audit", level: hclog.Error},
		{name: "below-level", logger: "host.audit", level: hclog.Debug},
		{name: "fields", logger: "host.memory", level: hclog.Info,
			args: []any{"error", errors.New("boom"), "took", 2 * time.Second, "list", []int{1, 2}, "odd"},
			want: []admin.LogLine{{Plugin: "memory", Level: "info", Message: "m",
				Fields: map[string]any{"error": "boom", "took": "2s", "list": rawJSON("[1,2]"), "odd": "(missing)"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := admin.NewLogRing(admin.LogRingOptions{Root: "host"})
			r.Accept(tt.logger, tt.level, "m", tt.args...)
			got := r.Lines(admin.LogQuery{})
			for i := range got {
				got[i].Time = time.Time{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("lines = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func rawJSON(s string) any { return json.RawMessage(s) }

// TestLogRingQuery: the ring keeps the last Lines per plugin and filters
// by plugin, level and time.
func TestLogRingQuery(t *testing.T) {
	r := admin.NewLogRing(admin.LogRingOptions{Root: "host", Lines: 3, Level: hclog.Trace})
	for i := range 5 {
		r.Accept("host.a", hclog.Trace, fmt.Sprintf("a%d", i))
	}
	r.Accept("host.b", hclog.Error, "b0")
	mid := time.Now()
	r.Accept("host.b", hclog.Warn, "b1")
	tests := []struct {
		name string
		q    admin.LogQuery
		want []string
	}{
		{name: "all", q: admin.LogQuery{}, want: []string{"a2", "a3", "a4", "b0", "b1"}},
		{name: "plugin", q: admin.LogQuery{Plugin: "b"}, want: []string{"b0", "b1"}},
		{name: "level", q: admin.LogQuery{Level: hclog.Warn}, want: []string{"b0", "b1"}},
		{name: "level-error", q: admin.LogQuery{Level: hclog.Error}, want: []string{"b0"}},
		{name: "since", q: admin.LogQuery{Since: mid}, want: []string{"b1"}},
		{name: "unknown-plugin", q: admin.LogQuery{Plugin: "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, l := range r.Lines(tt.q) {
				got = append(got, l.Message)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("messages = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLogRingBytes: each plugin's ring also keeps its lines within
// LogRingOptions.Bytes, the oldest forgotten first; a line larger than
// the bound alone is not kept.
func TestLogRingBytes(t *testing.T) {
	// A line of a 1000-byte message is 256 + 5 ("audit") + 4 ("info") +
	// 1000 bytes: three fit in 4000.
	r := admin.NewLogRing(admin.LogRingOptions{Root: "host", Bytes: 4000})
	for i := range 5 {
		r.Accept("host.audit", hclog.Info, fmt.Sprintf("%d%s", i, strings.Repeat("x", 999)))
	}
	r.Accept("host.audit", hclog.Info, "big", "field", strings.Repeat("y", 4000))
	r.Accept("host.memory", hclog.Info, "m")
	var got []string
	for _, l := range r.Lines(admin.LogQuery{}) {
		got = append(got, l.Message[:1])
	}
	if want := []string{"2", "3", "4", "m"}; !reflect.DeepEqual(got, want) {
		t.Errorf("kept lines starting %v, want %v", got, want)
	}
}

// TestLogRingSink: registered on an intercept logger, the ring receives
// the lines of every sub-logger, whatever the logger's own output level.
func TestLogRingSink(t *testing.T) {
	log := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "host", Output: io.Discard, Level: hclog.Error})
	r := admin.NewLogRing(admin.LogRingOptions{Root: "host"})
	log.RegisterSink(r)
	log.Named("redactor").Info("redacted", "count", 2)
	log.Named("kernel").Debug("not kept: below info")
	got := r.Lines(admin.LogQuery{})
	if len(got) != 1 || got[0].Plugin != "redactor" || got[0].Message != "redacted" || got[0].Fields["count"] != 2 {
		t.Errorf("lines = %+v, want the redactor's info line", got)
	}
}
