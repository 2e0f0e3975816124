package sidecar

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Manager defaults.
const (
	// DefaultPoolSize is how many plugins start at once.
	DefaultPoolSize = 4
	// DefaultBudget is the startup budget of one Start.
	DefaultBudget = 30 * time.Second
)

// ErrBudgetExhausted is the cause of the failure of every plugin still
// starting, or not yet launched, when a batch's startup budget ran out.
var ErrBudgetExhausted = errors.New("startup budget exhausted")

// errRequiredFailed cancels the rest of a batch once a required plugin
// failed: the batch fails anyway, so nobody waits for the budget.
var errRequiredFailed = errors.New("a required plugin failed to start")

// State is where a plugin is in a batch start.
type State string

// States reported in Events and Results.
const (
	StateStarting State = "starting"
	StateReady    State = "ready"
	StateFailed   State = "failed"
	// StateSkipped: nothing to start (a declarative or disabled package).
	StateSkipped State = "skipped"
)

// Event reports progress of one plugin in a batch start: starting, then
// ready or failed; or skipped, or failed without starting (not launched).
// With StartByName, a plugin reported ready is reported failed again when
// a plugin it depends on failed.
type Event struct {
	Plugin string
	State  State
	// Elapsed is the time since the plugin was launched (zero for
	// starting, skipped, and failures before launch).
	Elapsed time.Duration
	// Err is the failure, for StateFailed.
	Err error
}

// Result is the outcome of one package in a batch start.
type Result struct {
	Package *pluginpkg.Package
	// Required is the policy applied: the manifest's runtime.required
	// unless ManagerOptions.Required overrides it.
	Required bool
	// State is StateReady, StateFailed or StateSkipped.
	State State
	// Declarative is set for a package without runtime (State is
	// StateSkipped).
	Declarative bool
	// Client is the running plugin, for StateReady.
	Client  *Client
	Err     error
	Elapsed time.Duration
}

// Warning is an optional plugin's failure, or a resolution warning of
// StartByName: reported, not fatal.
type Warning struct {
	Plugin string
	Err    error
}

// String formats the warning as a message naming the plugin.
func (w Warning) String() string { return namedMessage(w.Plugin, w.Err) }

// namedMessage returns err's message, prefixed with `plugin "name": `
// unless it already names the plugin.
func namedMessage(plugin string, err error) string {
	msg := err.Error()
	if q := strconv.Quote(plugin); plugin == "" || strings.Contains(msg, q) {
		return msg
	}
	return fmt.Sprintf("plugin %q: %s", plugin, msg)
}

// Batch is the outcome of Manager.Start.
type Batch struct {
	// Results has one entry per package, in the order given.
	Results []Result
	// Clients are the running plugins, in package order.
	Clients []*Client
	// Warnings name each optional failure, in package order.
	Warnings []Warning
}

// RequiredStartError reports that required plugins failed to start. Every
// client of the batch was closed.
type RequiredStartError struct {
	// Failures are the failed required results, in package order.
	Failures []Result
}

// Error lists every failure.
func (e *RequiredStartError) Error() string {
	parts := make([]string, len(e.Failures))
	for i, r := range e.Failures {
		parts[i] = namedMessage(r.Package.Name, r.Err)
	}
	return "required plugins failed to start: " + strings.Join(parts, "; ")
}

// Unwrap returns the failures' errors.
func (e *RequiredStartError) Unwrap() []error {
	errs := make([]error, len(e.Failures))
	for i, r := range e.Failures {
		errs[i] = r.Err
	}
	return errs
}

// ManagerOptions configure a Manager. The zero value is usable.
type ManagerOptions struct {
	// Client is the Options every client starts with.
	Client Options
	// Config, if set, returns a package's effective configuration; it
	// replaces Client.Config per package.
	Config func(*pluginpkg.Package) json.RawMessage
	// Customize, if set, adjusts a copy of Client per package (after
	// Config), e.g. to add its environment or resource limits.
	Customize func(*pluginpkg.Package, *Options)
	// PoolSize bounds how many plugins start at once; zero means
	// DefaultPoolSize.
	PoolSize int
	// Budget bounds a whole Start, shared by every plugin in it; zero
	// means DefaultBudget.
	Budget time.Duration
	// Required, if set, decides the policy per package instead of the
	// manifest's runtime.required.
	Required func(*pluginpkg.Package) bool
	// OnEvent, if set, receives progress events. Calls are serialized (never
	// concurrent) but come from the batch's goroutines; it must not block.
	OnEvent func(Event)
}

// Manager starts batches of plugins and owns the clients it started until
// Close. Its methods are safe for concurrent use.
type Manager struct {
	opts    ManagerOptions
	eventMu sync.Mutex

	mu struct {
		sync.Mutex
		clients []*Client
		closed  bool
	}
}

// NewManager returns a Manager with opts.
func NewManager(opts ManagerOptions) *Manager {
	if opts.PoolSize <= 0 {
		opts.PoolSize = DefaultPoolSize
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	return &Manager{opts: opts}
}

func (m *Manager) emit(e Event) {
	if m.opts.OnEvent == nil {
		return
	}
	m.eventMu.Lock()
	defer m.eventMu.Unlock()
	m.opts.OnEvent(e)
}

func (m *Manager) required(p *pluginpkg.Package) bool {
	if m.opts.Required != nil {
		return m.opts.Required(p)
	}
	return p.Manifest != nil && p.Manifest.Runtime != nil && p.Manifest.Runtime.Required
}
