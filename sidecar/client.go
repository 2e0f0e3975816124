package sidecar

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/confine"
	"github.com/extkernel/extkernel/internal/pinexec"
	"github.com/extkernel/extkernel/internal/process"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// Client is one running plugin sidecar: its process, its stdio connection
// and its declarations. Create it with Start; stop it with Close. All methods
// are safe for concurrent use.
type Client struct {
	pkg  *pluginpkg.Package
	rt   *pluginpkg.Runtime // pkg's runtime, never nil
	opts Options
	log  hclog.Logger
	tail *tail
	out  *outQueue

	redact redactor    // Options.Redact: every plugin string passes it
	limit  *logLimiter // rate limit of the plugin's log lines
	// tracing is set when log was at trace level at Start: every frame
	// sent and received is then logged, redacted (traceFrame), those
	// received limited by frameLimit (nil when not tracing).
	tracing    bool
	frameLimit *logLimiter

	// Set by launch before any goroutine starts, then read-only.
	proc        *process.Process
	direct      *process.DirectWriter        // stdin written by callers, or nil (see send)
	confinement *pluginpkg.ConfinementReport // set by launch, then read-only
	spawned     time.Time                    // when launch returned (Spawned); set before run
	tmp         *confine.Tmp                 // ${tmp} of a confined plugin, or nil; released with files
	files       *pinexec.Copy                // the verified copy the plugin runs in (a package pin), or nil; removed by supervise, or by launch when it fails

	id        uint64                     // unique in this host process, never reused
	decl      *protocol.InitializeResult // set by Start before it returns
	nextID    atomic.Int64
	initID    atomic.Int64 // id of the initialize request
	handshook atomic.Bool  // the initialize response was read
	// streamBytes is set by the handshake when the plugin speaks protocol
	// 1.2 or later: it honours a stream's window_bytes.
	streamBytes bool
	// features are the wire.Features the plugin uses (features.go), set
	// by the reader from the answer to initialize before it reads on;
	// warned those whose unannounced use was logged.
	features, warned atomic.Uint32
	epoch            time.Time // monotonic origin of lastHeard
	// misbehaved is the net count of malformed messages read (see
	// malformed); only the reading goroutine touches it.
	misbehaved int
	lastHeard  atomic.Int64 // time since epoch of the last response read

	// life is cancelled, under mu, with the first fault as its cause (in
	// faulted, or recorded in exited), or with errClosing when Close
	// starts (closing): see stage.
	life context.Context
	end  context.CancelCauseFunc

	readers     atomic.Int32  // the stdout and stderr readers still running
	readersDone chan struct{} // closed by the last reader to return
	dead        chan struct{} // closed when the client is terminal (Err != nil)
	quiet       chan struct{} // closed when every goroutine but OnCrash's ended
	closeDone   chan struct{} // closed when Close finished
	closeOnce   sync.Once
	closeErr    error
	wg          sync.WaitGroup // every goroutine but the supervisor

	// callJobs hands the plugin's capability/calls to idle call workers
	// (inbound.go); created by the stdout reader, which alone uses it, on
	// the first call. idleCallWorkers counts the workers waiting on it.
	callJobs        chan callJob
	idleCallWorkers atomic.Int32

	growPipe sync.Once // OpenStream grows the stdout pipe once
	// rearms counts the call timers re-armed because progress extended
	// their calls (progress.go): bounded per call, whatever the plugin
	// sends; read by tests.
	rearms atomic.Int64

	// mu guards the fields below. It is a leaf lock: nothing else is
	// locked, and no I/O or callback runs, while it is held.
	mu struct {
		sync.Mutex
		pending map[int64]pendingCall
		inbound map[string]*inbound // the plugin's capability/calls in flight, by request id
		streams map[int64]*Stream   // the host's stream requests in flight, by id (stream.go)
		err     error               // terminal error, set once before dead closes
		state   state               // the lifecycle, changed only by state.transition
	}
}

// Start starts the plugin of package p: it checks the manifest's kernel
// range against this host's protocol version, spawns the runtime and
// completes the handshake. The handshake is bounded by the per-plugin
// timeout (runtime.handshake_timeout, else Options.HandshakeTimeout) and
// by ctx, typically a generation's startup budget. ctx bounds only the
// start: the running client lives until Close or a crash. p MUST come from
// a valid manifest (pluginpkg parsed it) and is read, never modified.
//
// On failure Start returns a *StartError, and the process, if any, has been
// stopped and reaped. On success the caller owns the Client and MUST call
// Close. On Windows it fails in phase "spawn" with an error wrapping
// errors.ErrUnsupported.
func Start(ctx context.Context, p *pluginpkg.Package, opts Options) (*Client, error) {
	if err := precheck(p, opts.Limits); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, &StartError{Plugin: p.Name, Phase: phaseSpawn, Err: context.Cause(ctx)}
	}
	c := newClient(p, opts)
	began := time.Now()
	dataDir, phase, err := c.launch()
	if err != nil {
		return nil, &StartError{Plugin: p.Name, Phase: phase, Err: err}
	}
	c.spawned = time.Now()
	c.run()
	if err := c.applyLimits(); err != nil {
		c.abort(false)
		return nil, &StartError{Plugin: p.Name, Phase: phaseLimits, Err: err, Stderr: c.tail.snapshot()}
	}
	decl, phase, err := c.handshake(ctx, dataDir)
	if err == nil {
		if err = c.arm(); err != nil {
			phase = phaseHandshake
		}
	}
	if err != nil {
		c.abort(phase != phaseHandshake)
		return nil, &StartError{Plugin: p.Name, Phase: phase, Err: err, Stderr: c.tail.snapshot()}
	}
	c.decl = decl
	c.reportHandshake(decl)
	c.log.Debug("handshake", "pid", c.proc.PID(), "elapsed", time.Since(began), "protocol", decl.ProtocolVersion)
	return c, nil
}

// precheck rejects, before any process starts, a manifest whose kernel
// range rejects this host's protocol version, a package that has no
// runtime, an OS that cannot run plugin processes, and limits this OS
// cannot apply.
func precheck(p *pluginpkg.Package, limits pluginpkg.ResourceLimits) error {
	if err := p.Manifest.CheckKernel(); err != nil {
		return &StartError{Plugin: p.Name, Phase: phaseVersion, Err: err}
	}
	if p.Manifest.Runtime == nil {
		return &StartError{Plugin: p.Name, Phase: phaseSpawn, Err: errors.New("declarative package: no runtime to start")}
	}
	if err := process.Supported(); err != nil {
		return &StartError{Plugin: p.Name, Phase: phaseSpawn, Err: err}
	}
	if (limits.OpenFiles != 0 || limits.AddressSpace != 0) && !process.LimitsSupported {
		return &StartError{Plugin: p.Name, Phase: phaseLimits, Err: fmt.Errorf("resource limits are supported on Linux only: %w", errors.ErrUnsupported)}
	}
	return nil
}

func newClient(p *pluginpkg.Package, opts Options) *Client {
	opts = opts.withDefaults()
	c := &Client{
		id:          clientIDs.Add(1),
		pkg:         p,
		rt:          p.Manifest.Runtime,
		opts:        opts,
		log:         opts.Logger.Named(p.Name),
		tail:        newTail(opts.stderrLines),
		readersDone: make(chan struct{}),
		dead:        make(chan struct{}),
		quiet:       make(chan struct{}),
		closeDone:   make(chan struct{}),
		epoch:       time.Now(),
	}
	c.out = newOutQueue(opts.queueBytes, c.startWriter)
	c.redact = redactor(opts.Redact)
	c.limit = newLogLimiter(c.log, opts)
	if c.tracing = c.log.IsTrace(); c.tracing {
		c.frameLimit = newLogLimiter(c.log.Named("frames"), opts)
	}
	c.life, c.end = context.WithCancelCause(context.Background())
	c.mu.pending = make(map[int64]pendingCall)
	return c
}

// run starts the goroutines every spawned client owns from the spawn on:
// the supervisor (which waits for the exit) and the stdout and stderr
// readers. The writer runs only while frames are queued (startWriter);
// the heartbeat starts once Start succeeded (arm).
func (c *Client) run() {
	c.readers.Store(2)
	c.wg.Add(2)
	go c.supervise()
	go c.readLoop()
	go c.readStderr()
}

// readStderr forwards the plugin's stderr to its logger until it ends.
func (c *Client) readStderr() {
	defer c.readerDone()
	forwardStderr(c.proc.Stderr, stderrSink{log: c.log, tail: c.tail, redact: c.redact, limit: c.limit})
}

// readerDone ends a reader: the last one closes readersDone.
func (c *Client) readerDone() {
	if c.readers.Add(-1) == 0 {
		close(c.readersDone)
	}
	c.wg.Done()
}

// arm is Start's move to running: a later crash fires OnCrash, and the
// heartbeat starts. If the plugin went down during the handshake and the
// client is not terminal yet, the stage stays (faulted, killed or exited)
// and only state.armed is set: Start succeeds and the crash fires OnCrash.
// It fails with the terminal error if the plugin already died during the
// handshake. The heartbeat is added to wg under mu, before finish can make
// the client terminal, so always before the supervisor waits for wg.
func (c *Client) arm() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.state.transition(stageRunning); !ok {
		return c.terminalErrLocked()
	}
	if c.opts.HeartbeatInterval > 0 {
		c.wg.Add(1)
		go c.heartbeat()
	}
	return nil
}

// clientIDs numbers clients: the last ID handed out.
var clientIDs atomic.Uint64

// ID returns the client's identity: unique among the clients created in
// this host process, never reused and never zero. Each Start, and so each
// restart of a plugin, gets a new one, so a supervisor can tell a report
// about the current process (OnCrash, OnHealth, OnNotify and Call all
// carry the Client) from a late one about a process it has replaced.
func (c *Client) ID() uint64 { return c.id }

// Name returns the plugin's name.
func (c *Client) Name() string { return c.pkg.Name }

// version returns the manifest's version, sent in initialize and set as
// EXTKERNEL_PLUGIN_VERSION.
func (c *Client) version() string { return c.pkg.Manifest.Version.String() }

// Spawned returns when the plugin's process was started (its exec
// returned), before its handshake began: a start's spawn is from the call
// to Start to Spawned, its handshake from Spawned to Start's return.
func (c *Client) Spawned() time.Time { return c.spawned }

// Declarations returns the plugin's answer to initialize, checked against
// its manifest, with every string passed through Options.Redact. The
// caller must not modify it.
func (c *Client) Declarations() *protocol.InitializeResult { return c.decl }

// PID returns the plugin's process id, which is also its process group id.
func (c *Client) PID() int { return c.proc.PID() }

// Busy reports whether the client has work in flight: a request of the
// host's not answered yet, a call of the plugin's not answered yet, or a
// stream open. A host that stops idle plugins asks it before it stops one
// (it must also count the requests it is about to send).
func (c *Client) Busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.pending) > 0 || len(c.mu.inbound) > 0 || len(c.mu.streams) > 0
}

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
