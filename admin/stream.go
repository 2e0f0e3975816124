package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/redact"
	"github.com/extkernel/extkernel/kernel/observe"
)

// eventLog keeps the recent kernel events, as lines, and feeds followers.
// Its add is the server's Subscribe callback: it converts the event,
// redacting a notify's data, then takes one short lock and never blocks.
type eventLog struct {
	redact redact.Func // nil: none
	mu     struct {
		sync.Mutex
		ring      *ring[EventLine]
		followers map[*follower[EventLine]]struct{}
	}
}

// newEventLog keeps the last n events of at most maxBytes in all.
func newEventLog(n int, maxBytes int64, r func(string) string) *eventLog {
	l := &eventLog{redact: r}
	l.mu.ring = newRing[EventLine](n, maxBytes)
	l.mu.followers = map[*follower[EventLine]]struct{}{}
	return l
}

func (l *eventLog) add(e observe.Event) {
	line := eventLine(e, l.redact)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.ring.add(line)
	for f := range l.mu.followers {
		if !f.offer(line) {
			delete(l.mu.followers, f)
		}
	}
}

// follow returns the kept events and a follower of later ones, dropped
// when n lines or maxBytes are sent and not read.
func (l *eventLog) follow(n int, maxBytes int64) ([]EventLine, *follower[EventLine], func()) {
	f := newFollower[EventLine](n, maxBytes)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.followers[f] = struct{}{}
	return l.mu.ring.all(), f, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.mu.followers, f)
	}
}

// streamQuery parses a stream's query, refusing keys it does not know.
func streamQuery(r *http.Request, known ...string) (url.Values, bool, *Error) {
	q := r.URL.Query()
	for k := range q {
		if !contains(known, k) && k != "follow" {
			return nil, false, badQuery("unknown query parameter %q (known: %s)", k, strings.Join(append(known, "follow"), ", "))
		}
	}
	follow := false
	if v := q.Get("follow"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, false, badQuery("follow=%q is not true or false", v)
		}
		follow = b
	}
	return q, follow, nil
}

func badQuery(format string, a ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: fmt.Sprintf(format, a...)}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// logs streams GET /v1/logs as NDJSON.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	if s.opts.Logs == nil {
		s.fail(w, &Error{Status: http.StatusNotFound, Code: CodeNoLogs, Message: "this server keeps no logs (its host set no LogRing)"})
		return
	}
	q, follow, e := streamQuery(r, "plugin", "level", "since")
	if e != nil {
		s.fail(w, e)
		return
	}
	lq, e := logQuery(q, time.Now())
	if e == nil && lq.Plugin != "" {
		e = s.knownPlugin(lq.Plugin, "lines", s.opts.Logs.sources())
	}
	if e != nil {
		s.fail(w, e)
		return
	}
	if !follow {
		streamLines(s, w, r, s.opts.Logs.Lines(lq), nil, lq.match)
		return
	}
	kept, f, cancel := s.opts.Logs.follow(lq, s.opts.FollowBuffer, s.opts.FollowBytes)
	defer cancel()
	streamLines(s, w, r, kept, f, lq.match)
}

// knownPlugin refuses a plugin that is no member of the current
// generation, not the kernel, and not one of seen (the plugins whose
// lines, the what, are kept): a typo, most likely. The error,
// CodeUnknownPlugin, names the closest name.
func (s *Server) knownPlugin(plugin, what string, seen []string) *Error {
	known := append(slices.Clone(seen), KernelSource)
	gen := "no generation"
	if g := s.k.Current(); g != nil {
		gen = fmt.Sprintf("generation %d", g.Number())
		for _, m := range g.Members() {
			known = append(known, m.Package.Name)
		}
	}
	if slices.Contains(known, plugin) {
		return nil
	}
	return &Error{Status: http.StatusNotFound, Code: CodeUnknownPlugin,
		Message: fmt.Sprintf("unknown plugin %q: no member of %s, and no %s kept for it%s", plugin, gen, what, didYouMean(plugin, known))}
}

// logQuery parses plugin, level and since (an RFC 3339 time, or a duration
// back from now).
func logQuery(q url.Values, now time.Time) (LogQuery, *Error) {
	lq := LogQuery{Plugin: q.Get("plugin")}
	if v := q.Get("level"); v != "" {
		lq.Level = hclog.LevelFromString(v)
		if lq.Level == hclog.NoLevel || lq.Level == hclog.Off {
			return lq, badQuery("level=%q is not trace, debug, info, warn or error", v)
		}
	}
	if v := q.Get("since"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			lq.Since = now.Add(-d)
		} else if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			lq.Since = t
		} else {
			return lq, badQuery("since=%q is neither a duration (5m) nor an RFC 3339 time", v)
		}
	}
	return lq, nil
}

// eventStream streams GET /v1/events as NDJSON.
func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) {
	q, follow, e := streamQuery(r, "plugin", "type")
	if e != nil {
		s.fail(w, e)
		return
	}
	kept, f, cancel := s.events.follow(s.opts.FollowBuffer, s.opts.FollowBytes)
	defer cancel()
	filter, e := s.eventQuery(q, kept)
	if e != nil {
		s.fail(w, e)
		return
	}
	if !follow {
		f = nil
	}
	streamLines(s, w, r, slices.DeleteFunc(kept, func(l EventLine) bool { return !filter.match(l) }), f, filter.match)
}

// streamLines writes kept, then (with a follower) every later line keep
// selects, one JSON document per line, each write bounded by the write
// timeout. It returns when the request or the server is done, a write
// fails (the client stopped reading), or the follower fell behind: then
// the stream's last line is an Error with CodeTooSlow.
func streamLines[T sized](s *Server, w http.ResponseWriter, r *http.Request, kept []T, f *follower[T], keep func(T) bool) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	send := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			b = mustMarshal(errorBody{&Error{Code: CodeInternal, Message: "encoding a line: " + err.Error()}})
		}
		rc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
		if _, err = w.Write(append(b, '\n')); err == nil {
			err = rc.Flush()
		}
		if err != nil {
			s.opts.Logger.Debug("admin: stream write failed; dropping the client", "path", r.URL.Path, "error", err)
			return false
		}
		return true
	}
	for _, v := range kept {
		if !send(v) {
			return
		}
	}
	if f == nil {
		if len(kept) == 0 {
			rc.Flush()
		}
		return
	}
	rc.Flush() // the client sees the stream open before the first new line
	for {
		select {
		case <-r.Context().Done():
			return
		case v, ok := <-f.ch:
			if !ok {
				s.opts.Logger.Debug("admin: follower fell behind; dropped", "path", r.URL.Path)
				send(errorBody{&Error{Code: CodeTooSlow,
					Message: fmt.Sprintf("dropped: the client fell %d lines or %s behind; reconnect to follow again",
						cap(f.ch), homefile.Size(f.maxBytes))}})
				return
			}
			f.taken(v)
			if keep(v) && !send(v) {
				return
			}
		}
	}
}
