package sidecar

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// maxStderrLine bounds one logged stderr line: a longer line is logged in
// pieces of this size, cut after it was redacted whole.
const maxStderrLine = 16 << 10

// maxQuotedID bounds the text of an id a message of the host quotes: a
// plugin makes its ids up, and a long one must not make a long line.
const maxQuotedID = 64

// maxStderrRecord bounds the stderr line the client reads whole, so that
// a plugin writing without newlines cannot grow host memory. A longer line
// is not logged, only its length: it could only be redacted in pieces,
// and a secret across a cut would be logged in two unredacted halves.
const maxStderrRecord = 256 << 10

// maxTailLine bounds one line kept in the tail for error messages.
const maxTailLine = 1 << 10

// tail keeps the last n lines written to it. It is safe for concurrent use.
type tail struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

func newTail(n int) *tail { return &tail{lines: make([]string, n)} }

func (t *tail) add(line string) {
	if len(line) > maxTailLine {
		line = line[:maxTailLine] + "..."
	}
	t.mu.Lock()
	t.lines[t.next] = line
	t.next = (t.next + 1) % len(t.lines)
	if t.next == 0 {
		t.full = true
	}
	t.mu.Unlock()
}

// snapshot returns the kept lines, oldest first, or nil.
func (t *tail) snapshot() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.full {
		if t.next == 0 {
			return nil
		}
		return append([]string(nil), t.lines[:t.next]...)
	}
	out := make([]string, 0, len(t.lines))
	out = append(out, t.lines[t.next:]...)
	return append(out, t.lines[:t.next]...)
}

// stderrSink is where a client's stderr lines go: the log (redacted and
// rate-limited) and the tail (redacted, every line).
type stderrSink struct {
	log    hclog.Logger
	tail   *tail
	redact redactor
	limit  *logLimiter
}

// forwardStderr reads r line by line until it fails, logging each line
// and keeping it in the tail, both after redaction. It returns when r
// returns an error (EOF when the plugin and everything it started closed
// stderr, or os.ErrClosed when the client closed its end), after logging
// the pending count of suppressed lines.
func forwardStderr(r io.Reader, s stderrSink) {
	defer s.limit.flush()
	lr := lineReader{r: r, max: maxStderrRecord}
	skipped := 0 // bytes of a line longer than maxStderrRecord
	for {
		line, err := lr.readLine()
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			skipped += len(line)
			continue
		case skipped > 0:
			s.longLine(skipped + len(line))
			skipped = 0
		default:
			if text := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(text)) > 0 {
				s.tail.add(s.line(text))
			}
		}
		if err != nil {
			return
		}
	}
}

// longLine reports a line too long to be redacted whole, which is not
// logged.
func (s stderrSink) longLine(n int) {
	msg := fmt.Sprintf("stderr line of %d bytes not logged: longer than %d bytes, it cannot be redacted whole", n, maxStderrRecord)
	s.tail.add(msg)
	if s.limit.allow() {
		s.log.Warn(msg)
	}
}

// minLineBuf is the first buffer of a lineReader.
const minLineBuf = 512

// lineReader reads lines as bufio.Reader.ReadSlice('\n') does with a
// buffer of max bytes: a line longer than max comes in pieces of max
// bytes, each with bufio.ErrBufferFull, and data buffered when the reader
// fails is returned with its error. Its buffer, though, starts at
// minLineBuf and doubles, up to max, only when a line needs it: most
// plugins write little to stderr, and a client keeps its stderr reader
// (and a bufio.Reader's max bytes) for its whole life.
type lineReader struct {
	r          io.Reader
	max        int
	buf        []byte
	start, end int   // buf[start:end] is buffered, not yet returned
	err        error // the reader's error, returned after the buffered lines
}

// readLine returns the next line, with its newline, valid until the next
// call.
func (lr *lineReader) readLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(lr.buf[lr.start:lr.end], '\n'); i >= 0 {
			line := lr.buf[lr.start : lr.start+i+1]
			lr.start += i + 1
			return line, nil
		}
		if lr.err != nil {
			line, err := lr.buf[lr.start:lr.end], lr.err
			lr.start, lr.err = lr.end, nil
			return line, err
		}
		if lr.end-lr.start >= lr.max {
			line := lr.buf[lr.start : lr.start+lr.max]
			lr.start += lr.max
			return line, bufio.ErrBufferFull
		}
		lr.fill()
	}
}

// fill reads at least one byte, or sets err: bufio.Reader.fill with a
// growing buffer.
func (lr *lineReader) fill() {
	if lr.start > 0 {
		lr.end = copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		grown := make([]byte, min(max(2*len(lr.buf), minLineBuf), lr.max))
		copy(grown, lr.buf[:lr.end])
		lr.buf = grown
	}
	for range 100 { // bufio's maxConsecutiveEmptyReads
		n, err := lr.r.Read(lr.buf[lr.end:])
		if n < 0 {
			panic("sidecar: reader returned a negative count")
		}
		lr.end += n
		if err != nil {
			lr.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	lr.err = io.ErrNoProgress
}

// line logs one stderr line, redacted, unless the rate limit suppresses
// it, and returns the text to keep in the tail. An hclog JSON line keeps
// its level, message and fields (one longer than maxStderrLine is logged
// cut, without its fields: logCut); its decoded strings and keys are
// redacted, so a secret the JSON escapes is caught too, and when that
// changed any the tail keeps the redacted entry re-encoded instead of the
// line. Anything else is logged at info, in pieces of at most
// maxStderrLine bytes cut from the redacted line.
func (s stderrSink) line(line []byte) string {
	text := s.redact(string(line))
	if line[0] == '{' {
		var entry map[string]any
		if json.Unmarshal(line, &entry) == nil {
			if _, ok := entry["@message"].(string); ok {
				var changed bool
				entry = s.redact.object(entry, &changed)
				if s.limit.allow() {
					logJSONEntry(s.log, entry, len(line))
				}
				if changed {
					if b, err := json.Marshal(entry); err == nil {
						text = string(b)
					}
				}
				return text
			}
		}
	}
	for rest := text; rest != ""; {
		piece := rest[:min(len(rest), maxStderrLine)]
		rest = rest[len(piece):]
		if s.limit.allow() {
			s.log.Info(piece)
		}
	}
	return text
}

// logJSONEntry logs an hclog JSON entry of a stderr line of size bytes:
// its message, at its level, with its fields, or cut (logCut) when the
// line is longer than maxStderrLine.
func logJSONEntry(log hclog.Logger, entry map[string]any, size int) {
	msg, _ := entry["@message"].(string)
	level, _ := entry["@level"].(string)
	if size > maxStderrLine {
		logCut(log, level, msg, size)
		return
	}
	fields := make(map[string]any, len(entry))
	for k, v := range entry {
		if len(k) > 0 && k[0] != '@' { // drop @level, @message, @timestamp, @module, @caller
			fields[k] = v
		}
	}
	logFields(log, level, msg, fields)
}

// logCut logs a structured line of the plugin (a log notification, an
// hclog JSON line) of size bytes, too long to log whole: its message cut
// to maxStderrLine bytes, at level, with the field cut, the bytes of the
// line not logged, instead of its fields.
func logCut(log hclog.Logger, level, msg string, size int) {
	kept := cutText(msg, maxStderrLine)
	logFields(log, level, kept, map[string]any{"cut": size - len(kept)})
}

// cutText returns s cut to at most n bytes, at the start of a rune.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// quoteID returns the text of an id the plugin sent, cut to maxQuotedID
// bytes and marked "..." when longer.
func quoteID(id string) string {
	if len(id) <= maxQuotedID {
		return id
	}
	return cutText(id, maxQuotedID) + "..."
}

// logFields logs msg at the named level (info when unknown) with fields as
// key/value pairs in key order.
func logFields(log hclog.Logger, level, msg string, fields map[string]any) {
	l := hclog.LevelFromString(level)
	if l == hclog.NoLevel {
		l = hclog.Info
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, k, fields[k])
	}
	log.Log(l, msg, args...)
}
