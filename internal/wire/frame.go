package wire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// DefaultMaxFrame is the default upper bound of one frame, newline excluded.
const DefaultMaxFrame = 4 << 20

// quoteLimit bounds how many offending bytes a FrameError quotes.
const quoteLimit = 120

// ErrFrameTooLarge is wrapped by the FrameError returned for a frame longer
// than the reader's limit.
var ErrFrameTooLarge = errors.New("frame exceeds size limit")

// FrameError reports a line on the wire that is not a valid message. Quote
// holds the first bytes of the offending line, quoted, so that stray output
// (a banner printed to stdout) is visible in the error.
type FrameError struct {
	// Line is the 1-based number of the offending line on this stream.
	Line  int
	Quote string
	Err   error
}

// Error describes the frame, e.g. `line 1: not a JSON-RPC message
// ("Starting plugin v2..."): invalid character 'S' ...`.
func (e *FrameError) Error() string {
	if e.Quote == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %v: %s", e.Line, e.Err, e.Quote)
}

// Unwrap returns the underlying cause.
func (e *FrameError) Unwrap() error { return e.Err }

func quote(b []byte) string {
	if len(b) > quoteLimit {
		return strconv.Quote(string(b[:quoteLimit])) + "..."
	}
	return strconv.Quote(string(b))
}

// Read buffer sizes of a FrameReader: it starts small, so that an idle
// plugin's reader holds little memory, and switches to the large size once a
// frame did not fit the small buffer: fewer reads for large frames, and a
// frame of up to 128 KiB (a stream's chunk of 64 KiB) read with no copy
// out of the read buffer.
const (
	frameBufSmall = 4 << 10
	frameBufLarge = 128 << 10
)

// FrameReader reads newline-delimited JSON-RPC messages with a size bound.
type FrameReader struct {
	src   io.Reader
	r     *bufio.Reader
	big   bool // r has the large buffer
	toBig bool // a frame did not fit the small buffer: switch when r is empty
	max   int
	line  int
	buf   []byte

	redact func(string) string // see SetRedact; nil means none
	trace  func(line []byte)   // see SetTrace; nil means none
}

// NewFrameReader returns a reader of frames from r. max <= 0 means
// DefaultMaxFrame.
func NewFrameReader(r io.Reader, max int) *FrameReader {
	if max <= 0 {
		max = DefaultMaxFrame
	}
	return &FrameReader{src: r, r: bufio.NewReaderSize(r, frameBufSmall), max: max}
}

// growReader moves to the large read buffer after a frame larger than the
// small one, at the end of the first frame (that one or a later one) after
// which the small buffer holds nothing unread, so that no input is lost.
func (fr *FrameReader) growReader() {
	if fr.big {
		return
	}
	if len(fr.buf) > frameBufSmall {
		fr.toBig = true
	}
	if !fr.toBig || fr.r.Buffered() > 0 {
		return
	}
	fr.r = bufio.NewReaderSize(fr.src, frameBufLarge)
	fr.big = true
}

// SetRedact makes the reader pass the whole offending line (as much of it
// as was read, at most the frame limit) through redact before a
// FrameError quotes its start: a secret is then never quoted in part, cut
// at the quote's limit. A host that scrubs secrets from what it logs sets
// it; nil means no redaction.
func (fr *FrameReader) SetRedact(redact func(string) string) { fr.redact = redact }

// quote quotes the start of the offending line a+b, redacted whole first
// when the reader has a redactor.
func (fr *FrameReader) quote(a, b []byte) string {
	if fr.redact == nil {
		return quoteStart(a, b)
	}
	return quote([]byte(fr.redact(string(a) + string(b))))
}

// SetTrace makes the reader give each frame it returns to trace, before it
// is decoded: a host logging every frame at trace level sets it. The line
// is valid only during the call. nil means none.
func (fr *FrameReader) SetTrace(trace func(line []byte)) { fr.trace = trace }

// ReadFrame returns the next non-empty line without its newline. The slice
// is valid until the next call. At end of stream it returns io.EOF (an
// unterminated last line is returned first). A line over the limit returns a
// *FrameError wrapping ErrFrameTooLarge; the stream is then unusable.
func (fr *FrameReader) ReadFrame() ([]byte, error) {
	if fr.big && cap(fr.buf) <= frameBufLarge {
		fr.buf = nil // frames that fit the large read buffer need no line buffer
	}
	for {
		line, err := fr.readLine()
		if err != nil {
			return nil, err
		}
		fr.growReader()
		fr.line++
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if fr.trace != nil {
			fr.trace(line)
		}
		return line, nil
	}
}

// readLine returns the next line with its newline (the last one may lack
// it): a slice of the read buffer when the whole line is in it, with no
// copy, else the line assembled in the line buffer.
func (fr *FrameReader) readLine() ([]byte, error) {
	fr.buf = fr.buf[:0]
	chunk, err := fr.r.ReadSlice('\n')
	if err == nil && len(chunk) <= fr.max+1 {
		return chunk, nil
	}
	for {
		if len(fr.buf)+len(chunk) > fr.max+1 {
			fr.line++
			return nil, &FrameError{Line: fr.line, Quote: fr.quote(fr.buf, chunk),
				Err: fmt.Errorf("%w (%d bytes)", ErrFrameTooLarge, fr.max)}
		}
		fr.grow(len(chunk))
		fr.buf = append(fr.buf, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
		case err == nil, err == io.EOF && len(fr.buf) > 0:
			return fr.buf, nil
		default:
			return nil, err
		}
		chunk, err = fr.r.ReadSlice('\n')
	}
}

// grow makes room for n more bytes in the line buffer, whose capacity
// never exceeds max+1 (a frame and its newline): the memory a reader holds
// is bounded by the frame limit and its bufio.Reader (4 KiB, or 128 KiB
// once a frame was larger), whatever the input; once the reader has its
// large buffer, the line buffer is dropped while frames fit that buffer.
func (fr *FrameReader) grow(n int) {
	need := len(fr.buf) + n
	if need <= cap(fr.buf) {
		return
	}
	buf := make([]byte, len(fr.buf), min(max(need, 2*cap(fr.buf)), fr.max+1))
	copy(buf, fr.buf)
	fr.buf = buf
}

// quoteStart quotes the start of a line read as a and then b, without
// copying more of it than the quote shows.
func quoteStart(a, b []byte) string {
	if len(a) > quoteLimit {
		return quote(a)
	}
	return quote(append(a[:len(a):len(a)], b[:min(len(b), quoteLimit+1-len(a))]...))
}

// ReadMessage reads and decodes the next message. A line that is not a JSON
// object with "jsonrpc":"2.0" is a *FrameError quoting it.
func (fr *FrameReader) ReadMessage() (*Message, error) {
	line, err := fr.ReadFrame()
	if err != nil {
		return nil, err
	}
	m := new(Message)
	if err := DecodeMessage(line, m); err != nil {
		return nil, &FrameError{Line: fr.line, Quote: fr.quote(line, nil), Err: err}
	}
	return m, nil
}

// ReadChunkOrMessage reads the next frame. A stream chunk in the layout
// CutChunkFrame knows is cut into *p, which must be zero, aliasing the
// reader's buffer (valid until the next read: the caller copies what it
// keeps), and reported with a nil message: its data is not validated yet
// (ValidChunkData), so that the scan of a stream's data runs on its
// consumer's goroutine rather than the reader's. Any other frame is
// decoded, and validated, as ReadMessage decodes it.
func (fr *FrameReader) ReadChunkOrMessage(p *StreamChunkParams) (*Message, error) {
	line, err := fr.ReadFrame()
	if err != nil {
		return nil, err
	}
	if CutChunkFrame(line, p) {
		return nil, nil
	}
	m := new(Message)
	if err := DecodeMessage(line, m); err != nil {
		return nil, &FrameError{Line: fr.line, Quote: fr.quote(line, nil), Err: err}
	}
	return m, nil
}

// DecodeMessage decodes one frame into m, which it overwrites, and checks
// the JSON-RPC envelope. m's raw fields never alias line. The decoding is
// json.Unmarshal's (a one-pass decoder that agrees with it does the usual
// frames, see decodeMessageFast), except that a frame holding one of the envelope's members twice is
// refused (ErrDuplicateMember): json.Unmarshal would keep the last, so a
// response {"id":1,"id":2,...} would answer request 2, not 1.
func DecodeMessage(line []byte, m *Message) error {
	if len(line) == 0 || line[0] != '{' {
		return errors.New("not a JSON-RPC message")
	}
	*m = Message{}
	if !decodeMessageFast(line, m) {
		*m = Message{}
		if err := json.Unmarshal(line, m); err != nil {
			return fmt.Errorf("not a JSON-RPC message: %w", err)
		}
		if err := checkMembersOnce(line); err != nil {
			return err
		}
	}
	if m.JSONRPC != JSONRPCVersion {
		return fmt.Errorf("not a JSON-RPC 2.0 message: jsonrpc is %q", m.JSONRPC)
	}
	switch {
	case m.Method != "":
		if m.Result != nil || m.Error != nil {
			return errors.New("invalid message: has both method and result/error")
		}
	case len(m.ID) == 0:
		return errors.New("invalid message: neither method nor id")
	case m.Result == nil && m.Error == nil:
		return errors.New("invalid response: neither result nor error")
	}
	return nil
}

// ErrDuplicateMember is wrapped by the error DecodeMessage returns for a
// frame that holds one of the envelope's members (jsonrpc, id, method,
// params, result, error) more than once, in any spelling encoding/json
// would match to it (keys match case-insensitively).
var ErrDuplicateMember = errors.New("duplicate member")

// envelope lists the members of Message as they are spelled on the wire.
var envelope = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

// checkMembersOnce returns an error wrapping ErrDuplicateMember when line,
// a JSON object json.Unmarshal accepted, holds an envelope member twice.
// Only the slow path runs it: the fast one refuses a repeated key itself.
func checkMembersOnce(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	var seen [len(envelope)]bool
	var skip json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		for i, name := range envelope {
			if !strings.EqualFold(key, name) {
				continue
			}
			if seen[i] {
				return fmt.Errorf("invalid message: %w %q", ErrDuplicateMember, name)
			}
			seen[i] = true
		}
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// FrameWriter writes messages as frames. It is safe for concurrent use.
type FrameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

// NewFrameWriter returns a writer of frames to w.
func NewFrameWriter(w io.Writer) *FrameWriter { return &FrameWriter{w: w} }

// WriteMessage encodes m and writes it as one frame.
func (fw *FrameWriter) WriteMessage(m *Message) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.buf.Reset()
	enc := json.NewEncoder(&fw.buf) // Encode appends the newline.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("encode %s: %w", describe(m), err)
	}
	_, err := fw.w.Write(fw.buf.Bytes())
	return err
}

// WriteFrame writes an already encoded message followed by a newline. line
// must not contain a newline.
func (fw *FrameWriter) WriteFrame(line []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	fw.buf.Reset()
	fw.buf.Write(line)
	fw.buf.WriteByte('\n')
	_, err := fw.w.Write(fw.buf.Bytes())
	return err
}

// WriteLine writes line, one encoded message followed by its newline (and
// no other newline), as it is, in one write: the caller saves the copy
// WriteFrame makes to add the newline.
func (fw *FrameWriter) WriteLine(line []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, err := fw.w.Write(line)
	return err
}

// WriteLineUnless is WriteLine unless stop, called with the writer held,
// reports true; then nothing is written and it returns false. A caller
// thus orders its check with every other frame: a frame written after
// the check cannot come before the line on the wire.
func (fw *FrameWriter) WriteLineUnless(stop func() bool, line []byte) (bool, error) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if stop() {
		return false, nil
	}
	_, err := fw.w.Write(line)
	return true, err
}

func describe(m *Message) string {
	if m.Method != "" {
		return "message " + strconv.Quote(m.Method)
	}
	return "response " + string(m.ID)
}
