package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/kernel"
)

// Defaults of Options.
const (
	defaultMaxBody       = 1 << 20
	defaultWriteTimeout  = 5 * time.Second
	defaultHeaderTimeout = 5 * time.Second
	defaultBodyTimeout   = 10 * time.Second
	defaultIdleTimeout   = time.Minute
	defaultMaxConns      = 64
	defaultEvents        = 256
	defaultEventBytes    = 8 << 20
	defaultFollowBuffer  = 256
	defaultFollowBytes   = 8 << 20
	// maxHeaderBytes bounds a request's header.
	maxHeaderBytes = 64 << 10
)

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("admin: server closed")

// Options configure a Server. The zero value serves everything but logs
// (no LogRing) and stop (no OnStop).
type Options struct {
	// Logs is the LogRing registered on the kernel's logger; nil answers
	// GET /v1/logs with CodeNoLogs.
	Logs *LogRing
	// Version is the host program's version, for GET /v1/version and
	// GET /v1/status.
	Version string
	// MaxBody bounds a request body, in bytes (default 1 MiB); a larger
	// one is answered with CodeBodyTooLarge.
	MaxBody int64
	// WriteTimeout bounds each write to a client (default 5s): a client
	// that stops reading loses its answer or stream, nothing else.
	WriteTimeout time.Duration
	// HeaderTimeout bounds reading a request's header, from when the
	// server starts reading it (default 5s): a client that sends its
	// header slowly, or connects and sends nothing, is disconnected
	// without an answer (http.Server.ReadHeaderTimeout).
	HeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body, from when its header
	// has been read (default 10s): a client that sends it slowly is
	// answered CodeRequestTimeout and disconnected. The body (at most
	// MaxBody) is read whole before the request is routed, whatever the
	// path, and the bound ends with it: a call or a stream afterwards
	// runs as long as it needs.
	BodyTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no next
	// request for this long (default 1 minute).
	IdleTimeout time.Duration
	// MaxConns bounds the connections served at once, across every
	// listener of the server (default 64). A connection over the cap is
	// not accepted until a served one closes: it waits in the socket's
	// backlog (its client's own deadline applies), and is never closed
	// unanswered. A follower (logs or events with follow) holds its
	// connection while it follows.
	MaxConns int
	// Events is how many recent kernel events GET /v1/events keeps
	// (default 256).
	Events int
	// EventBytes bounds the kept events in bytes (default 8 MiB), each
	// counted as its line's text and data plus a fixed 256 bytes: the
	// oldest are forgotten first. An event whose line is larger than
	// EventBytes on its own is not kept (followers still receive it).
	// The default keeps a notify with the most data a plugin can send
	// (4 MiB).
	EventBytes int64
	// FollowBuffer is how many lines a follower (logs or events with
	// follow) may fall behind before it is dropped (default 256).
	FollowBuffer int
	// FollowBytes is how many bytes of lines (counted as for EventBytes)
	// a follower may fall behind before it is dropped (default 8 MiB).
	FollowBytes int64
	// Redact, when set, redacts a notify's data in the event lines (the
	// ring, GET /v1/events and its followers), JSON-aware: a secret is
	// found in the text a JSON string stands for, escaped or not, and in
	// object keys. A host passes config.Config.Redactor() (package
	// kernel/config), the function the kernel redacts every other plugin
	// string with before it reaches the server; nil redacts nothing. The
	// host's own Subscribe callbacks keep the data raw.
	Redact func(string) string
	// OnReload, when set, is called after each reload requested through
	// the API, with Kernel.Reload's result (for a host that prints or logs
	// reloads). It runs on the request's goroutine before the answer is
	// written.
	OnReload func(*kernel.ReloadResult, error)
	// OnStop, when set, is called by POST /v1/stop after its answer is
	// written and flushed, on the request's goroutine: it asks the host
	// to stop its kernel (cancel the context it runs under, as SIGTERM
	// would) and MUST NOT block, nor wait for Close, which waits for the
	// handler. It may be called more than once, until the host closes the
	// server. Nil answers POST /v1/stop with CodeNotSupported.
	OnStop func()
	// ConfigPath is the host's config file, shown by GET /v1/status;
	// empty when it has none.
	ConfigPath string
	// Started is when the host started the kernel, for the uptime GET
	// /v1/status shows; zero means when NewServer was called.
	Started time.Time
	// Logger receives the server's own notes (dropped followers, failed
	// writes) at debug; nil discards them.
	Logger hclog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxBody <= 0 {
		o.MaxBody = defaultMaxBody
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = defaultWriteTimeout
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = defaultHeaderTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = defaultBodyTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = defaultMaxConns
	}
	if o.Events <= 0 {
		o.Events = defaultEvents
	}
	if o.EventBytes <= 0 {
		o.EventBytes = defaultEventBytes
	}
	if o.FollowBuffer <= 0 {
		o.FollowBuffer = defaultFollowBuffer
	}
	if o.FollowBytes <= 0 {
		o.FollowBytes = defaultFollowBytes
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Started.IsZero() {
		o.Started = time.Now()
	}
	return o
}

// Server serves the admin API of one kernel. Create it with NewServer.
type Server struct {
	k      *kernel.Kernel
	opts   Options
	http   *http.Server
	ctx    context.Context // of every request; cancelled by Close
	cancel context.CancelFunc
	events *eventLog
	unsub  func()
	mux    *http.ServeMux // built by NewServer, read-only after
	// slots holds one value per connection served (Options.MaxConns),
	// shared by the listeners' limitListeners.
	slots chan struct{}

	// active counts running handlers; once closing is set (by Close) no
	// handler starts, so Close's Wait never races an Add.
	active struct {
		sync.Mutex
		closing bool
		wg      sync.WaitGroup
	}
	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// NewServer returns a server for k. It subscribes to k's events at once,
// so that GET /v1/events shows what happens from then on (create it before
// k.Start to keep the start's progress). It serves nothing until Serve.
func NewServer(k *kernel.Kernel, opts Options) *Server {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{k: k, opts: opts, ctx: ctx, cancel: cancel, events: newEventLog(opts.Events, opts.EventBytes, opts.Redact),
		closed: make(chan struct{}), slots: make(chan struct{}, opts.MaxConns)}
	s.unsub = k.Subscribe(s.events.add)
	s.mux = s.newMux()
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: opts.HeaderTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          opts.Logger.StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
	}
	return s
}

// Serve accepts connections on ln until Close, then returns nil; it
// returns ErrServerClosed when called after Close, and the listener's
// error if it fails. Close closes ln. Serve may be called on several
// listeners, each from its own goroutine; Options.MaxConns bounds the
// connections of all of them together: while that many are open, Serve
// accepts no other.
func (s *Server) Serve(ln net.Listener) error {
	select {
	case <-s.closed:
		ln.Close()
		return ErrServerClosed
	default:
	}
	err := s.http.Serve(newLimitListener(ln, s.slots))
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the server: it stops accepting, ends every stream and
// cancels every request in progress (a call to a plugin gets a cancelled
// context), waits for the handlers to return, closes the connections and
// the listeners, and unsubscribes from the kernel. ctx bounds the wait for
// handlers; when it is done, connections are closed regardless, and Close
// still waits for the handlers, which then end at their next write. It is
// idempotent: later calls wait for the first and return its result. The
// server may not be reused.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.cancel()
		s.active.Lock()
		s.active.closing = true
		s.active.Unlock()
		err := s.http.Shutdown(ctx)
		if err != nil {
			err = errors.Join(err, s.http.Close())
		}
		s.active.wg.Wait()
		s.unsub()
		s.closeErr = err
		close(s.closed)
	})
	<-s.closed
	return s.closeErr
}

// route is one endpoint: a method and a ServeMux path pattern, whose
// segments are literal or "{name}" (a wildcard, read with r.PathValue).
type route struct {
	method, path string
	handle       http.HandlerFunc
}

// table lists every endpoint (docs/admin.md).
func (s *Server) table() []route {
	return []route{
		{method: http.MethodGet, path: "/v1/version", handle: s.version},
		{method: http.MethodGet, path: "/v1/status", handle: s.status},
		{method: http.MethodGet, path: "/v1/plugins", handle: s.plugins},
		{method: http.MethodGet, path: "/v1/contributions", handle: s.contributions},
		{method: http.MethodGet, path: "/v1/plan", handle: s.plan},
		{method: http.MethodPost, path: "/v1/reload", handle: s.reload},
		{method: http.MethodPost, path: "/v1/plugins/{name}/restart", handle: s.restart},
		{method: http.MethodPost, path: "/v1/call", handle: s.call},
		{method: http.MethodPost, path: "/v1/stop", handle: s.stop},
		{method: http.MethodGet, path: "/v1/logs", handle: s.logs},
		{method: http.MethodGet, path: "/v1/events", handle: s.eventStream},
	}
}

// newMux builds the router of the table. Each route is registered as
// "METHOD path"; each path again without a method, answering the methods
// it does not take with 405; and "/" answers every other path with 404.
// So ServeMux's own plain-text 404 and 405 never answer.
func (s *Server) newMux() *http.ServeMux {
	routes := s.table()
	var paths []string               // in table order
	allowed := map[string][]string{} // by path, in table order
	for _, rt := range routes {
		if allowed[rt.path] == nil {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], rt.method)
	}
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.method+" "+rt.path, s.endpoint(rt, allowed[rt.path]))
	}
	for _, p := range paths {
		methods := allowed[p]
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { s.notAllowed(w, r, methods) })
	}
	mux.HandleFunc("/", s.notFound)
	return mux
}

// endpoint runs rt's handler (its request body already read by
// serveHTTP). A GET pattern also matches HEAD, which no endpoint takes:
// HEAD is refused as any other method is.
func (s *Server) endpoint(rt route, allowed []string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != rt.method {
			s.notAllowed(w, r, allowed)
			return
		}
		rt.handle(w, r)
	}
}

// serveHTTP counts the request in (a closing server answers CodeClosed),
// reads its body within Options.BodyTimeout (readBody) and routes it. A
// path that is not clean is no endpoint's: ServeMux would redirect it to
// its cleaned form.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		s.fail(w, &Error{Status: http.StatusServiceUnavailable, Code: CodeClosed, Message: "the admin server is closing"})
		return
	}
	defer s.active.wg.Done()
	if e := s.readBody(w, r); e != nil {
		s.fail(w, e)
		return
	}
	if !isClean(r.URL.Path) {
		s.notFound(w, r)
		return
	}
	s.mux.ServeHTTP(w, decoded(r))
}

// notFound answers a path no endpoint has.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.fail(w, &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: "no endpoint " + r.URL.Path + " (docs/admin.md lists them)"})
}

// notAllowed answers a method that the path's endpoints, which take
// allowed, do not take.
func (s *Server) notAllowed(w http.ResponseWriter, r *http.Request, allowed []string) {
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	s.fail(w, &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
		Message: r.Method + " " + r.URL.Path + " is not allowed: use " + strings.Join(allowed, " or ")})
}

// isClean reports whether p is a path ServeMux routes as it is: rooted,
// with no empty, "." or ".." segment, a final slash aside.
func isClean(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	c := path.Clean(p)
	return p == c || c != "/" && p == c+"/"
}

// decoded returns r, or a copy of it without r.URL.RawPath, so that
// routing reads the decoded path r.URL.Path, the one the answers name: an
// escaped slash (%2F) separates segments there, and a {name} never holds
// one. ServeMux on its own matches the escaped path. Like http.StripPrefix,
// it copies r rather than change it.
func decoded(r *http.Request) *http.Request {
	if r.URL.RawPath == "" {
		return r
	}
	r2 := new(http.Request)
	*r2 = *r
	r2.URL = new(url.URL)
	*r2.URL = *r.URL
	r2.URL.RawPath = ""
	return r2
}

// enter counts a handler in, unless Close began.
func (s *Server) enter() bool {
	s.active.Lock()
	defer s.active.Unlock()
	if s.active.closing {
		return false
	}
	s.active.wg.Add(1)
	return true
}

// answer writes v as a JSON answer with status 200.
func (s *Server) answer(w http.ResponseWriter, v any) {
	s.write(w, http.StatusOK, v)
}

// fail writes e as a JSON error answer.
func (s *Server) fail(w http.ResponseWriter, e *Error) {
	s.write(w, e.Status, errorBody{Error: e})
}

// write writes one JSON document within the write timeout.
func (s *Server) write(w http.ResponseWriter, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, mustMarshal(errorBody{&Error{Code: CodeInternal, Message: "encoding the answer: " + err.Error()}})
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if _, err := w.Write(b); err != nil {
		s.opts.Logger.Debug("admin: writing an answer failed", "error", err)
	}
}

// marshal encodes v as indented JSON with a final newline, HTML left as is.
func marshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func mustMarshal(v any) []byte {
	b, err := marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// decode reads a JSON request body into v, refusing unknown fields,
// trailing data and bodies over the limit.
func decode(r *http.Request, v any) *Error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("data after the JSON value")
	}
	if err == nil {
		return nil
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeBodyTooLarge,
			Message: "request body is larger than " + homefile.Size(tooBig.Limit)}
	}
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidJSON, Message: "request body: " + err.Error()}
}
