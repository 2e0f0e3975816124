package sdktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/confine"
	"github.com/extkernel/extkernel/internal/process"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// A session is one start of the plugin: its process, the host's ends of
// its pipes, and the suite's side of the protocol. The suite speaks the
// protocol itself (not through the host's client), so that it can send
// malformed frames and see every line the plugin writes.
//
// Lock order: writeMu, then mu; mu is a leaf and is never held across I/O.
type session struct {
	proc   *process.Process
	nextID atomic.Int64

	writeMu     sync.Mutex // serializes writes to stdin; guards stdinClosed
	stdinClosed bool

	mu struct {
		sync.Mutex
		pending   map[string]chan answer // requests awaiting their answer
		abandoned map[string]bool        // requests whose answer is no longer awaited
		answered  map[string]bool        // requests answered once
		handshook bool                   // initialize was answered
		early     []string               // messages sent before that
		stdout    []string               // what on stdout is not a valid frame
	}
	nulls chan answer // responses with id null (to malformed frames)

	stdoutDone chan struct{} // closed when the stdout reader ended
	stderr     stderrLog
	stderrDone chan struct{}
	wg         sync.WaitGroup // the stdout and stderr readers and the waiter

	releaseOnce sync.Once
	holders     []int // set by release

	denied  *denials  // what the plugin was denied, nil when unconfined
	host    *stubHost // answers the plugin's capability/call
	cbMu    sync.Mutex
	cbCalls []callback // the plugin's calls into the host, under cbMu

	streams streamTable // the streams the suite asked for (streams.go)
	feeds   feedTable   // the streams the stub host feeds (feed.go)
}

// answer is a response and when the reader read it.
type answer struct {
	m  *wire.Message
	at time.Time
}

// initID is the id of initialize, the first request of every session.
const initID = "1"

// launch is how a session starts the plugin beyond its command: confined
// by policy (nil: not), with tmp its temporary directory, and what it was
// denied found in its stderr and error answers.
type launch struct {
	policy *confine.Policy
	tmp    string
	denied *denials
}

func (r *runner) launch() launch { return launch{policy: r.policy, tmp: r.tmp, denied: r.denied} }

// startSession spawns pkg's runtime command as the kernel does: no shell,
// the package directory as working directory, its own process group,
// the environment env, confined as l says.
func startSession(pkg *pluginpkg.Package, path string, env []string, l launch) (*session, error) {
	rt := pkg.Manifest.Runtime
	cfg := process.Config{
		Path: path,
		Args: append([]string{rt.Command}, rt.Args...),
		Dir:  pkg.Dir,
		Env:  env,
		Log:  hclog.NewNullLogger(),
	}
	if l.policy != nil {
		confineConfig(&cfg, l.policy, l.tmp)
	}
	proc, err := process.Start(cfg)
	if err != nil {
		return nil, err
	}
	s := &session{proc: proc, nulls: make(chan answer, 8), stdoutDone: make(chan struct{}), stderrDone: make(chan struct{}), denied: l.denied}
	s.stderr.scan = l.denied.scan
	s.mu.pending = make(map[string]chan answer)
	s.mu.abandoned = make(map[string]bool)
	s.mu.answered = make(map[string]bool)
	s.wg.Add(3)
	go func() {
		defer s.wg.Done()
		proc.Wait()
	}()
	go s.readStdout()
	go func() {
		defer s.wg.Done()
		defer close(s.stderrDone)
		s.stderr.read(proc.Stderr)
	}()
	return s, nil
}

// readStdout reads frames until the stream ends or breaks, routing each.
func (s *session) readStdout() {
	defer s.wg.Done()
	defer close(s.stdoutDone)
	fr := wire.NewFrameReader(s.proc.Stdout, wire.DefaultMaxFrame)
	for {
		line, err := fr.ReadFrame()
		if err != nil {
			if errors.Is(err, wire.ErrFrameTooLarge) {
				s.violation("%v; the host stops a plugin that sends one (§1)", err)
			}
			return
		}
		m := new(wire.Message)
		if err := wire.DecodeMessage(line, m); err != nil {
			s.violation("%v: %s", err, quote(line))
			continue
		}
		s.route(m)
	}
}

// route handles one message from the plugin.
func (s *session) route(m *wire.Message) {
	switch {
	case m.IsResponse():
		s.response(m)
	case m.IsRequest():
		if !s.handshook() {
			s.earlyMessage("request %q", m.Method)
			return
		}
		if m.Method == wire.MethodCapabilityCall && s.host != nil {
			cb, reply := s.host.answer(m, s.inFlight)
			if cb.window > 0 && reply.Error == nil {
				s.startFeed(m.ID, cb.window, cb)
				return
			}
			s.cbMu.Lock()
			s.cbCalls = append(s.cbCalls, cb)
			s.cbMu.Unlock()
			_ = s.write(reply)
			return
		}
		// As the host does: no other plugin request exists.
		_ = s.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: m.ID,
			Error: &protocol.Error{Code: protocol.CodeMethodNotFound, Message: "the host provides no method " + strconv.Quote(m.Method)}})
	default:
		if !s.handshook() {
			s.earlyMessage("notification %q", m.Method)
		} else if m.Method == wire.MethodProgress && s.host != nil && !s.host.uses(wire.HasProgress) {
			s.violation("$/progress without announcing the %q feature in initialize; the host ignores it (§4.6)", wire.FeatureProgress)
		} else if m.Method == wire.MethodStreamChunk {
			s.chunk(m)
		} else if m.Method == wire.MethodStreamAck || m.Method == wire.MethodCancel {
			s.feedNotification(m)
		}
	}
}

// inFlight reports whether id names a request the suite sent and awaits.
func (s *session) inFlight(id json.RawMessage) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.mu.pending[idKey(id)]
	return ok
}

// callbacks returns the plugin's calls into the host so far.
func (s *session) callbacks() []callback {
	s.cbMu.Lock()
	defer s.cbMu.Unlock()
	return slices.Clone(s.cbCalls)
}

// response delivers a response to its request, or records why it answers
// none.
func (s *session) response(m *wire.Message) {
	a := answer{m: m, at: time.Now()}
	if m.Error != nil {
		s.denied.scan(m.Error.Message)
	}
	key := idKey(m.ID)
	if key == "null" {
		if m.Error == nil {
			s.violation("a result with id null answers no request (§2)")
			return
		}
		select {
		case s.nulls <- a:
		default:
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ch, pending := s.mu.pending[key]; {
	case s.mu.answered[key]:
		s.violationLocked("request %s answered twice; a request is answered exactly once (§2)", key)
	case pending:
		delete(s.mu.pending, key)
		s.mu.answered[key] = true
		if !s.mu.handshook && s.host != nil && m.Error == nil {
			// The answer to initialize, always the first request: its
			// features judge the plugin's next messages (§4.6).
			s.host.takeFeatures(m.Result)
		}
		s.mu.handshook = true
		ch <- a
	case s.mu.abandoned[key]:
		s.mu.answered[key] = true // a late answer, dropped as the host drops it
	case !s.mu.handshook:
		// The only request in flight is initialize: answered with another id.
		if ch, ok := s.mu.pending[initID]; ok {
			delete(s.mu.pending, initID)
			s.mu.handshook = true
			ch <- a
		}
	default:
		s.violationLocked("a response with id %s answers no request in flight (§2)", quoteLimited(key, 40))
	}
}

// idKey is the text of an id, integers in their canonical form.
func idKey(id json.RawMessage) string {
	if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return string(id)
}

func (s *session) handshook() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.handshook
}

func (s *session) earlyMessage(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.early = append(s.mu.early, fmt.Sprintf(format, a...))
}

func (s *session) violation(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violationLocked(format, a...)
}

func (s *session) violationLocked(format string, a ...any) {
	s.mu.stdout = append(s.mu.stdout, fmt.Sprintf(format, a...))
}

// violations returns what on stdout was not a valid frame or answered no
// request, in the order read.
func (s *session) violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.mu.stdout...)
}

// earlyMessages returns what the plugin sent before answering initialize.
func (s *session) earlyMessages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.mu.early...)
}

// write sends m as one frame.
func (s *session) write(m *wire.Message) error {
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return s.writeLine(line)
}

// writeLine writes line and a newline to the plugin's stdin, blocking at
// most as long as the host would (protocol.md §6).
func (s *session) writeLine(line []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.stdinClosed {
		return errors.New("stdin is closed")
	}
	_ = s.proc.Stdin.SetWriteDeadline(time.Now().Add(wire.DefaultWriteStall))
	_, err := s.proc.Stdin.Write(append(line, '\n'))
	if err != nil {
		return fmt.Errorf("write to the plugin's stdin: %w", err)
	}
	return nil
}

// request sends a request and returns its id and the channel its answer
// arrives on.
func (s *session) request(method string, params any) (string, chan answer, error) {
	key := s.nextKey()
	ch, err := s.requestKey(key, method, params)
	return key, ch, err
}

// nextKey returns the id of the next request.
func (s *session) nextKey() string { return strconv.FormatInt(s.nextID.Add(1), 10) }

// requestKey sends request key (from nextKey) and returns the channel its
// answer arrives on.
func (s *session) requestKey(key, method string, params any) (chan answer, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	ch := make(chan answer, 1)
	s.mu.Lock()
	s.mu.pending[key] = ch
	s.mu.Unlock()
	if err := s.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, ID: json.RawMessage(key), Method: method, Params: raw}); err != nil {
		s.abandon(key)
		return nil, err
	}
	return ch, nil
}

// notify sends a notification.
func (s *session) notify(method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return s.write(&wire.Message{JSONRPC: wire.JSONRPCVersion, Method: method, Params: raw})
}

// abandon stops waiting for the answer to request key; a late answer is
// dropped, as the host drops it.
func (s *session) abandon(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.pending[key]; ok {
		delete(s.mu.pending, key)
		s.mu.abandoned[key] = true
	}
}

// await waits until deadline for an answer on ch. It returns false when
// none came: the deadline passed, or stdout ended without it. Its error is
// ctx's.
func (s *session) await(ctx context.Context, ch chan answer, deadline time.Time) (answer, bool, error) {
	select { // an answer already read wins over a passed deadline
	case a := <-ch:
		return a, true, nil
	default:
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case a := <-ch:
		return a, true, nil
	case <-s.stdoutDone:
		select {
		case a := <-ch:
			return a, true, nil
		default:
			return answer{}, false, nil
		}
	case <-t.C:
		return answer{}, false, nil
	case <-ctx.Done():
		return answer{}, false, ctx.Err()
	}
}

// call sends a request and waits for its answer within d; without one,
// the request is abandoned.
func (s *session) call(ctx context.Context, method string, params any, d time.Duration) (answer, bool, error) {
	key, ch, err := s.request(method, params)
	if err != nil {
		return answer{}, false, nil
	}
	a, ok, err := s.await(ctx, ch, time.Now().Add(d))
	if !ok {
		s.abandon(key)
	}
	return a, ok, err
}

// exited reports whether the process exited and was reaped.
func (s *session) exited() bool {
	select {
	case <-s.proc.Done():
		return true
	default:
		return false
	}
}

// waitExit waits at most d for the process to exit.
func (s *session) waitExit(ctx context.Context, d time.Duration) (bool, error) {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-s.proc.Done():
		return true, nil
	case <-t.C:
		return s.exited(), nil
	case <-ctx.Done():
		return s.exited(), ctx.Err()
	}
}

// closeStdin closes the plugin's stdin: the end of its input.
func (s *session) closeStdin() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if !s.stdinClosed {
		s.stdinClosed = true
		s.proc.Stdin.Close()
	}
}

// terminate ends a plugin that did not exit, as the host's stop sequence
// does (§9 steps 3 and 4): SIGTERM to its process group, the kill grace,
// SIGKILL, and the wait for its exit.
func (s *session) terminate(ctx context.Context) {
	if s.exited() {
		return
	}
	_ = s.proc.Terminate()
	if ok, _ := s.waitExit(ctx, wire.DefaultKillGrace); ok {
		return
	}
	_ = s.proc.Kill()
	<-s.proc.Done()
}

// readerGrace bounds how long release waits for the readers to see the end
// of stdout and stderr before it closes the host's ends itself.
const readerGrace = time.Second

// release kills whatever of the plugin is left, reaps it and waits for the
// session's goroutines. It returns the pids of processes that had left the
// plugin's process group and still held its pipes (found on Linux only),
// now killed. It may be called more than once.
func (s *session) release() []int {
	s.releaseOnce.Do(func() {
		s.closeStdin()
		if !s.exited() {
			_ = s.proc.Kill()
			<-s.proc.Done()
		}
		s.proc.Reap()
		s.holders = s.proc.KillPipeHolders(time.Second)
		t := time.NewTimer(readerGrace)
		for _, done := range []chan struct{}{s.stdoutDone, s.stderrDone} {
			select {
			case <-done:
			case <-t.C:
			}
		}
		t.Stop()
		s.proc.Stdout.Close()
		s.proc.Stderr.Close()
		s.wg.Wait()
	})
	return s.holders
}

// gone reports whether the plugin can no longer answer: its stdout ended
// or it exited.
func (s *session) gone() bool {
	select {
	case <-s.stdoutDone:
		return true
	default:
		return s.exited()
	}
}

// notAnswered says that what was not answered: within d while the plugin
// runs, or why not when it is gone.
func (s *session) notAnswered(what string, d time.Duration) string {
	if s.gone() {
		return what + " was not answered" + s.why()
	}
	return fmt.Sprintf("%s was not answered within %v", what, d)
}

// why describes, for a reason, what became of a plugin that stopped
// answering: its exit status when it exited, and its last stderr lines.
func (s *session) why() string {
	var parts []string
	select {
	case <-s.stdoutDone:
		if ok, _ := s.waitExit(context.Background(), 200*time.Millisecond); ok {
			parts = append(parts, "the plugin exited ("+s.proc.ExitStatus()+")")
		} else {
			parts = append(parts, "the plugin closed its stdout")
		}
	default:
		if s.exited() {
			parts = append(parts, "the plugin exited ("+s.proc.ExitStatus()+")")
		}
	}
	// A plugin that exited may still have stderr in the pipe: read it to
	// its end (bounded, for a helper that keeps the pipe open) so that the
	// reason quotes its last words.
	select {
	case <-s.stderrDone:
	case <-time.After(200 * time.Millisecond):
	}
	if tail := s.stderr.lastLines(); len(tail) > 0 {
		parts = append(parts, "its last stderr: "+strings.Join(tail, " | "))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// quote quotes the start of a line for a reason.
func quote(line []byte) string { return quoteLimited(string(line), 80) }

func quoteLimited(s string, n int) string {
	if len(s) > n {
		return strconv.Quote(s[:n]) + "..."
	}
	return strconv.Quote(s)
}
