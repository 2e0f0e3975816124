package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// write sends m; a failure aborts the session (the host is gone).
func (s *session) write(m *wire.Message) {
	if err := s.fw.WriteMessage(m); err != nil {
		s.cancelAbort(fmt.Errorf("write to host: %w", err))
	}
}

// reply answers request id with result: a *resultJSON or an encoded value
// is sent as is, anything else is marshalled (an internal error answers
// when it cannot be). The frame is assembled in a pooled buffer, with no
// second encoding of the result.
func (s *session) reply(id json.RawMessage, result any) {
	var raw []byte
	switch r := result.(type) {
	case *resultJSON:
		raw = r.buf.Bytes()
		defer r.free()
	case encoded:
		raw = r
	default:
		b, err := json.Marshal(result)
		if err != nil {
			s.replyError(id, Errorf(wire.CodeInternalError, "marshal result: %v", err))
			return
		}
		raw = b
	}
	fb := frameBufs.Get().(*[]byte)
	*fb = wire.AppendResult((*fb)[:0], id, raw)
	if err := s.fw.WriteFrame(*fb); err != nil {
		s.cancelAbort(fmt.Errorf("write to host: %w", err))
	}
	if cap(*fb) <= maxPooledBuf {
		frameBufs.Put(fb)
	}
}

// encoded is a result already marshalled (compact JSON, no newline).
type encoded []byte

// emptyObject is the {} result of ping, shutdown and a nil output.
var emptyObject any = encoded("{}")

// maxPooledBuf bounds the capacity of a buffer returned to a pool, so one
// large answer does not stay allocated.
const maxPooledBuf = 64 << 10

// frameBufs pools the buffers response frames are assembled in.
var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// resultJSON is a result marshalled into a pooled buffer by output.
type resultJSON struct{ buf bytes.Buffer }

var resultBufs = sync.Pool{New: func() any { return new(resultJSON) }}

func newResultJSON() *resultJSON {
	r := resultBufs.Get().(*resultJSON)
	r.buf.Reset()
	return r
}

// free returns r to its pool; r must not be used after.
func (r *resultJSON) free() {
	if r.buf.Cap() <= maxPooledBuf {
		resultBufs.Put(r)
	}
}

// replyError answers request id with e.
func (s *session) replyError(id json.RawMessage, e *protocol.Error) {
	s.write(wire.NewErrorResponse(id, e))
}
