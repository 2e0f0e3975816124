package admin

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/kernel/observe"
)

// line is a test line of a given size.
type line struct {
	name string
	n    int64
}

func (l line) size() int64 { return l.n }

func lineNames(ls []line) string {
	var out []string
	for _, l := range ls {
		out = append(out, l.name)
	}
	return strings.Join(out, " ")
}

// TestRingBounds: a ring keeps the newest lines within its count and its
// bytes, oldest first; a line over the byte bound alone is not kept.
func TestRingBounds(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		maxBytes int64
		add      []line
		want     string
	}{
		{"within", 3, 100, []line{{"a", 10}, {"b", 10}}, "a b"},
		{"count", 2, 100, []line{{"a", 10}, {"b", 10}, {"c", 10}}, "b c"},
		{"bytes", 10, 100, []line{{"a", 40}, {"b", 40}, {"c", 40}}, "b c"},
		{"bytes evict several", 10, 100, []line{{"a", 30}, {"b", 30}, {"c", 30}, {"d", 90}}, "d"},
		{"exactly full", 10, 100, []line{{"a", 50}, {"b", 50}}, "a b"},
		{"too large alone", 10, 100, []line{{"a", 10}, {"big", 101}, {"b", 10}}, "a b"},
		{"wraps around", 3, 1000, []line{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}, {"f", 1}, {"g", 1}}, "e f g"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing[line](tt.n, tt.maxBytes)
			for _, l := range tt.add {
				r.add(l)
			}
			if got := lineNames(r.all()); got != tt.want {
				t.Errorf("kept %q, want %q", got, tt.want)
			}
			var sum int64
			for _, l := range r.all() {
				sum += l.n
			}
			if sum != r.bytes {
				t.Errorf("bytes = %d, the kept lines sum to %d", r.bytes, sum)
			}
		})
	}
}

// TestFollowerBytes: a follower is dropped once the lines sent and not
// taken would pass its byte bound; what the reader took no longer counts.
func TestFollowerBytes(t *testing.T) {
	f := newFollower[line](100, 100)
	for _, l := range []line{{"a", 40}, {"b", 40}} {
		if !f.offer(l) {
			t.Fatalf("offer(%s) dropped the follower early", l.name)
		}
	}
	f.taken(<-f.ch) // a read: 40 bytes queued
	if !f.offer(line{"c", 60}) {
		t.Fatal("offer(c) dropped the follower though the reader took a")
	}
	if f.offer(line{"d", 1}) {
		t.Fatal("offer(d) kept a follower 101 bytes behind")
	}
	var got []line
	for l := range f.ch { // closed: the lines sent before, then the end
		got = append(got, l)
	}
	if lineNames(got) != "b c" {
		t.Errorf("the dropped follower still reads %q, want b c", lineNames(got))
	}
}

// TestEventLineRedaction: a notify's data is redacted JSON-aware (an
// escaped secret, a secret as a key), never shared with the event, which
// keeps its data raw; other strings are taken as the kernel redacted them.
func TestEventLineRedaction(t *testing.T) {
	const secret = "hunter2-secret"
	r := func(s string) string { return strings.ReplaceAll(s, secret, "[REDACTED]") }
	raw := json.RawMessage(`{"token":"hunter2\u002dsecret","` + secret + `":[1,"x ` + secret + `"]}`)
	e := observe.Event{Type: observe.EventNotify, Plugin: "p", Name: "login", Data: raw}
	l := eventLine(e, r)
	if want := `{"[REDACTED]":[1,"x [REDACTED]"],"token":"[REDACTED]"}`; string(l.Data) != want {
		t.Errorf("data = %s, want %s", l.Data, want)
	}
	if !strings.Contains(string(e.Data), `hunter2\u002dsecret`) {
		t.Errorf("the event's own data changed: %s", e.Data)
	}
	clean := observe.Event{Type: observe.EventNotify, Plugin: "p", Name: "n", Data: json.RawMessage(`{"a":1}`),
		Err: errors.New("e")}
	for _, fn := range []func(string) string{r, nil} {
		l := eventLine(clean, fn)
		if string(l.Data) != `{"a":1}` || l.Error != "e" || l.Name != "n" {
			t.Errorf("line = %+v", l)
		}
		if &l.Data[0] == &clean.Data[0] {
			t.Error("the line shares the event's data")
		}
	}
}

// TestEventLogBytes: the event log keeps events within its byte bound, as
// lines counted by their size.
func TestEventLogBytes(t *testing.T) {
	l := newEventLog(100, 3*lineOverhead+3000, nil)
	for _, name := range []string{"a", "b", "c", "d"} {
		l.add(observe.Event{Type: observe.EventNotify, Plugin: "p", Name: name,
			Data: json.RawMessage(`"` + strings.Repeat("x", 998) + `"`)})
	}
	kept, _, cancel := l.follow(1, 1)
	defer cancel()
	var names []string
	for _, e := range kept {
		names = append(names, e.Name)
	}
	// Each line is 256 + 6 + 1 + 1 + 1000 bytes: two fit, three do not.
	if got := strings.Join(names, " "); got != "c d" {
		t.Errorf("kept %q, want c d", got)
	}
}
