package sdktest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// The host's bounds on one stderr line (package sidecar): a longer line is
// logged in pieces, and one longer than the record bound is not logged at
// all, only its length.
const (
	hostLogPiece  = 16 << 10
	hostLogRecord = 256 << 10
)

// Bounds of what a stderrLog keeps.
const (
	keptProblems = 5   // problems quoted in the stderr case
	keptTail     = 3   // last lines quoted when a plugin stopped answering
	tailLine     = 160 // bytes of one quoted tail line
)

// stderrLog reads a plugin's stderr and judges each line as the host would
// log it (protocol.md §1, "Logging on stderr"). It is safe for concurrent
// use.
type stderrLog struct {
	mu       sync.Mutex
	lines    int
	problems []string // the first keptProblems
	more     int      // problems beyond those
	tail     []string
	// scan, when set before read, is given every line (what the plugin
	// was denied is found in them).
	scan func(string) []string
}

// read reads r line by line until it fails.
func (l *stderrLog) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	n := 0 // bytes of the current line, kept or not
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if len(line) <= hostLogRecord {
			line = append(line, chunk[:min(len(chunk), hostLogRecord+1-len(line))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if n > 0 {
			l.add(bytes.TrimRight(line, "\r\n"), n)
		}
		if err != nil {
			return
		}
		line, n = line[:0], 0
	}
}

// add judges one line of n bytes (line holds at most the record bound).
func (l *stderrLog) add(line []byte, n int) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if l.scan != nil {
		l.scan(string(line))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines++
	if problem := judgeLine(line, n); problem != "" {
		if len(l.problems) < keptProblems {
			l.problems = append(l.problems, fmt.Sprintf("line %d: %s", l.lines, problem))
		} else {
			l.more++
		}
	}
	t := string(line)
	if len(t) > tailLine {
		t = t[:tailLine] + "..."
	}
	if l.tail = append(l.tail, t); len(l.tail) > keptTail {
		l.tail = l.tail[1:]
	}
}

// judgeLine returns why line is not a log line the host reads as meant,
// or "".
func judgeLine(line []byte, n int) string {
	switch {
	case n > hostLogRecord:
		return fmt.Sprintf("%d bytes: longer than %d KiB, the host does not log it", n, hostLogRecord>>10)
	case n > hostLogPiece:
		return fmt.Sprintf("%d bytes: the host logs it cut in pieces of %d KiB", n, hostLogPiece>>10)
	case !utf8.Valid(line):
		return "not valid UTF-8"
	case line[0] != '{':
		return "" // plain text, logged at info
	}
	var entry map[string]any
	if err := json.Unmarshal(line, &entry); err != nil {
		return "starts with { but is not a JSON object, so it is logged as plain text: " + quote(line)
	}
	if _, ok := entry["jsonrpc"]; ok {
		return "a JSON-RPC message on stderr; frames go to stdout: " + quote(line)
	}
	if _, ok := entry["@message"].(string); !ok {
		return "a JSON object without a string @message, so it is logged as plain text, not as an hclog record: " + quote(line)
	}
	if lv, ok := entry["@level"]; ok {
		switch lv {
		case "trace", "debug", "info", "warn", "error":
		default:
			return fmt.Sprintf("@level %v is not trace, debug, info, warn or error", lv)
		}
	}
	return ""
}

// findings returns the problems kept and how many more there were, and
// how many lines were read.
func (l *stderrLog) findings() (problems []string, more, lines int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.problems...), l.more, l.lines
}

// lastLines returns the last lines read, oldest first.
func (l *stderrLog) lastLines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.tail...)
}
