package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// Client is one running plugin sidecar: its process, its stdio connection
// and its declarations. Create it with Start; stop it with Close. All methods
// are safe for concurrent use.
type Client struct {
	pkg  *pluginpkg.Package
	opts Options
	log  hclog.Logger
	tail *tail
	out  *outQueue

	redact redactor    // Options.Redact: every plugin string passes it
	limit  *logLimiter // rate limit of the plugin's log lines

	// Set by spawn before any goroutine starts, then read-only.
	cmd                   *exec.Cmd
	pid                   int
	stdin, stdout, stderr *os.File
	stdinRaw              syscall.RawConn // stdin for direct writes, or nil (see send)
	pipeInodes            [3]uint64       // of the stdio pipes (see killPipeHolders)
	direct                directWrite     // used by the holder of the right to write
	life                  context.Context // cancelled to SIGKILL the group
	kill                  context.CancelFunc

	id        uint64                     // unique in this host process, never reused
	decl      *protocol.InitializeResult // set by Start before it returns
	nextID    atomic.Int64
	initID    atomic.Int64 // id of the initialize request
	handshook atomic.Bool  // the initialize response was read
	epoch     time.Time    // monotonic origin of lastHeard
	lastHeard atomic.Int64 // time since epoch of the last response read

	faults    chan error    // capacity 1: the first reason to stop the plugin
	exited    chan struct{} // closed when cmd.Wait returned
	waitErr   error         // cmd.Wait's error, set before exited closes
	dead      chan struct{} // closed when the client is terminal (Err != nil)
	readDone  chan struct{} // closed when the stdout reader returned
	errDone   chan struct{} // closed when the stderr reader returned
	ready     chan struct{} // closed when Start succeeded
	quiet     chan struct{} // closed when every goroutine but OnCrash's ended
	stopping  chan struct{} // closed when Close starts
	closeDone chan struct{} // closed when Close finished
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup // every goroutine but the supervisor

	// mu guards the fields below. It is a leaf lock: nothing else is
	// locked, and no I/O or callback runs, while it is held.
	mu struct {
		sync.Mutex
		pending map[int64]chan *protocol.Message
		err     error // terminal error, set once before dead closes
		closing bool  // Close started: termination is not a crash
		down    bool  // the plugin exited or faulted: calls wait for err
		armed   bool  // Start succeeded: a crash fires OnCrash
	}
}

// Start spawns pkg's runtime and completes the handshake. The handshake is
// bounded by the per-plugin timeout (the manifest's
// runtime.handshake_timeout, else Options.HandshakeTimeout, else
// protocol.DefaultHandshakeTimeout) and by ctx, typically the generation's
// startup budget. ctx bounds only the start: the running client lives
// until Close or a crash.
//
// On failure Start returns a *StartError, and the process, if any, has been
// stopped and reaped. On success the caller owns the Client and MUST call
// Close.
func Start(ctx context.Context, pkg *pluginpkg.Package, opts Options) (*Client, error) {
	if err := precheck(pkg, opts.Limits); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &StartError{Plugin: pkg.Name, Phase: PhaseSpawn, Err: context.Cause(ctx)}
	}
	c := newClient(pkg, opts)
	dataDir, phase, err := c.launch()
	if err != nil {
		c.kill()
		return nil, &StartError{Plugin: pkg.Name, Phase: phase, Err: err}
	}
	c.run()
	if err := c.applyLimits(); err != nil {
		c.abort(false)
		return nil, &StartError{Plugin: pkg.Name, Phase: PhaseLimits, Err: err, Stderr: c.tail.snapshot()}
	}
	decl, phase, err := c.handshake(ctx, dataDir)
	if err == nil {
		if err = c.arm(); err != nil {
			phase = PhaseHandshake
		}
	}
	if err != nil {
		c.abort(phase != PhaseHandshake)
		return nil, &StartError{Plugin: pkg.Name, Phase: phase, Err: err, Stderr: c.tail.snapshot()}
	}
	c.decl = decl
	close(c.ready)
	return c, nil
}

// precheck rejects, before any process starts, a package that has no
// runtime or whose kernel constraint rejects this host's protocol version,
// and limits this OS cannot apply.
func precheck(pkg *pluginpkg.Package, limits Limits) error {
	if pkg == nil || pkg.Manifest == nil {
		return &StartError{Plugin: "", Phase: PhaseSpawn, Err: errors.New("no manifest")}
	}
	if pkg.Manifest.Runtime == nil {
		return &StartError{Plugin: pkg.Name, Phase: PhaseSpawn, Err: errors.New("declarative package: no runtime to start")}
	}
	if err := checkKernelConstraint(pkg); err != nil {
		return &StartError{Plugin: pkg.Name, Phase: PhaseVersion, Err: err}
	}
	if !limits.isZero() && !limitsSupported {
		return &StartError{Plugin: pkg.Name, Phase: PhaseLimits, Err: errors.New("resource limits are supported on Linux only")}
	}
	return nil
}

func newClient(pkg *pluginpkg.Package, opts Options) *Client {
	opts = opts.withDefaults()
	c := &Client{
		id:        clientIDs.Add(1),
		pkg:       pkg,
		opts:      opts,
		log:       opts.Logger.Named(pkg.Name),
		tail:      newTail(opts.StderrLines),
		out:       newOutQueue(),
		faults:    make(chan error, 1),
		exited:    make(chan struct{}),
		dead:      make(chan struct{}),
		readDone:  make(chan struct{}),
		errDone:   make(chan struct{}),
		ready:     make(chan struct{}),
		quiet:     make(chan struct{}),
		stopping:  make(chan struct{}),
		closeDone: make(chan struct{}),
		epoch:     time.Now(),
	}
	c.redact = redactor(opts.Redact)
	c.limit = newLogLimiter(c.log, opts)
	c.life, c.kill = context.WithCancel(context.Background())
	c.mu.pending = make(map[int64]chan *protocol.Message)
	return c
}

// run starts the goroutines every spawned client owns: the process waiter,
// the supervisor, the stdout and stderr readers, the stdin writer and the
// heartbeat (which idles until Start succeeds).
func (c *Client) run() {
	c.wg.Add(4)
	if c.opts.HeartbeatInterval > 0 {
		c.wg.Add(1)
		go c.heartbeat()
	}
	go func() {
		defer c.wg.Done()
		awaitExit(c.pid)
		c.waitErr = c.cmd.Wait() // the status is read from cmd.ProcessState
		close(c.exited)
	}()
	go c.supervise()
	go c.readLoop()
	go func() {
		defer c.wg.Done()
		defer close(c.errDone)
		forwardStderr(c.stderr, stderrSink{log: c.log, tail: c.tail, redact: c.redact, limit: c.limit})
	}()
	go c.writeLoop()
}

// exitStatus returns the process's final state as os.ProcessState
// reports it ("exit status 0", "signal: killed"), or, when the wait failed
// and the state is unknown, says so with the wait's error. It must only
// run after exited closed.
func (c *Client) exitStatus() string {
	if ps := c.cmd.ProcessState; ps != nil {
		return ps.String()
	}
	return fmt.Sprintf("exit status unknown: %v", c.waitErr)
}

// arm makes a later crash fire OnCrash. It fails with the terminal error if
// the plugin already died during the handshake.
func (c *Client) arm() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.err != nil {
		return c.mu.err
	}
	c.mu.armed = true
	return nil
}

// clientIDs numbers clients: the last ID handed out.
var clientIDs atomic.Uint64

// ID returns the client's identity: unique among the clients created in
// this host process, never reused and never zero. Each Start, and so each
// restart of a plugin, gets a new one. CrashError and OnHealth carry it,
// so a supervisor can ignore late reports from a process it has already
// replaced.
func (c *Client) ID() uint64 { return c.id }

// Name returns the plugin's name.
func (c *Client) Name() string { return c.pkg.Name }

// Package returns the package the client was started from.
func (c *Client) Package() *pluginpkg.Package { return c.pkg }

// Declarations returns the plugin's answer to initialize, checked against
// its manifest, with every string passed through Options.Redact. The
// caller must not modify it.
func (c *Client) Declarations() *protocol.InitializeResult { return c.decl }

// PID returns the plugin's process id, which is also its process group id.
func (c *Client) PID() int { return c.pid }

// Done returns a channel closed when the client is terminal: the plugin
// crashed or Close stopped it. Err then says which.
func (c *Client) Done() <-chan struct{} { return c.dead }

// Err returns nil while the plugin runs, then the *CrashError that ended it
// or ErrClosed.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.err
}

// StderrTail returns the last lines the plugin wrote to stderr, oldest
// first.
func (c *Client) StderrTail() []string { return c.tail.snapshot() }
