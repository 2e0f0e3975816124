package admin

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// limitListener is a listener Serve serves: its Accept first takes one of
// the server's connection slots (Options.MaxConns, shared by every
// listener of the server), waiting while none is free, and the connection
// it returns gives the slot back when it is closed. A connection over the
// cap is not refused: it waits in the socket's backlog, unaccepted.
type limitListener struct {
	net.Listener
	slots     chan struct{} // the server's; a slot is taken by sending
	done      chan struct{} // closed by Close, to end a wait for a slot
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, slots chan struct{}) *limitListener {
	return &limitListener{Listener: ln, slots: slots, done: make(chan struct{})}
}

// Accept waits for a free slot, then accepts a connection. After Close it
// returns net.ErrClosed.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, slots: l.slots}, nil
}

// Close ends a wait for a slot and closes the listener.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// slotConn is an accepted connection holding a slot until it is closed.
type slotConn struct {
	net.Conn
	slots chan struct{}
	once  sync.Once
}

// Close closes the connection and frees its slot (once).
func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.slots })
	return err
}

// CloseWrite shuts down the writing side where the connection can (a Unix
// or TCP connection), as net/http does before closing after an error
// answer.
func (c *slotConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// readBody reads r's body whole, before routing, within
// Options.BodyTimeout from now, and replaces r.Body with what it read.
// At most Options.MaxBody bytes are read: a larger body's replacement
// ends with the *http.MaxBytesError, which decode answers with
// CodeBodyTooLarge; it ends with any other read error too, which decode
// answers as before. A body that does not arrive in time is a
// CodeRequestTimeout error; the connection is closed after the answer.
//
// The read deadline is cleared once the body has been read (net/http's
// watch for the client going away, which starts then, clears it too), so
// a call or a stream afterwards runs as long as it needs. It stays set
// after an error (the connection is closed then), so that net/http's own
// reading of the rest of a refused body is bounded too.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) *Error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	rc := http.NewResponseController(w)
	if err := rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout)); err != nil {
		return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "setting the body's read deadline: " + err.Error()}
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	switch {
	case err == nil:
		rc.SetReadDeadline(time.Time{})
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		return &Error{Status: http.StatusRequestTimeout, Code: CodeRequestTimeout,
			Message: "request body: not received within " + s.opts.BodyTimeout.String() + " (Options.BodyTimeout)"}
	}
	r.Body = &readBack{Reader: bytes.NewReader(data), err: err}
	return nil
}

// readBack is a body read beforehand: its bytes, then err (nil: io.EOF).
type readBack struct {
	*bytes.Reader
	err error
}

func (b *readBack) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *readBack) Close() error { return nil }
