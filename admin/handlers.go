package admin

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// version answers GET /v1/version.
func (s *Server) version(w http.ResponseWriter, _ *http.Request) {
	s.answer(w, VersionAnswer{API: APIVersion, Host: s.opts.Version, Protocol: protocol.Version, Go: runtime.Version()})
}

// status answers GET /v1/status.
func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	a, err := s.statusAnswer(time.Now())
	if err != nil {
		s.fail(w, err)
		return
	}
	s.answer(w, a)
}

// statusAnswer builds the status answer at now.
func (s *Server) statusAnswer(now time.Time) (*StatusAnswer, *Error) {
	g := s.k.Current()
	if g == nil {
		return nil, kernelError(s.notRunning())
	}
	a := &StatusAnswer{
		Kernel: KernelStatus{PID: os.Getpid(), Started: s.opts.Started, UptimeSeconds: seconds(now.Sub(s.opts.Started)),
			Version: s.opts.Version, Config: s.opts.ConfigPath},
		Generation: GenerationStatus{Number: g.Number(), Created: g.Created(), AgeSeconds: seconds(now.Sub(g.Created())), Hash: g.Hash()},
		Warnings:   g.Warnings(),
	}
	if a.Warnings == nil {
		a.Warnings = []string{}
	}
	ps := s.k.Plugins()
	a.Plugins = make([]PluginStatus, 0, len(ps))
	for _, p := range ps {
		st := PluginStatus{Name: p.Name, Version: p.Version, State: string(p.State), PID: p.PID, Since: p.Since,
			Restarts: p.Restarts, Reason: p.Reason}
		if p.PID != 0 && (p.State == observe.StateReady || p.State == observe.StateUnresponsive) {
			up := seconds(now.Sub(p.Since))
			st.UptimeSeconds = &up
		}
		st.Calls = callStats(p.Calls)
		if c := p.Confinement; c != nil {
			st.Confinement = &Confinement{Mode: c.Mode, Mechanism: c.Mechanism, LandlockABI: c.LandlockABI, NotEnforced: c.NotEnforced}
		}
		st.Activation, st.Lazy, st.Bake = p.Activation, lazyActivity(p.Lazy), bakeOf(p.Bake)
		st.Protocol, st.Features, st.Usage = p.Protocol, p.Features, p.Usage
		a.Plugins = append(a.Plugins, st)
	}
	return a, nil
}

// seconds is d in seconds, rounded to the millisecond.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// notRunning is the kernel's error for a request that needs a generation
// when Current is nil: ErrNotStarted or ErrClosed. It asks a dispatch
// method, which says which without a lock and without calling a plugin
// when there is no generation.
func (s *Server) notRunning() error {
	if _, err := s.k.CallProvider(s.ctx, "", nil); errors.Is(err, kernel.ErrClosed) {
		return err
	}
	return kernel.ErrNotStarted
}

// plugins answers GET /v1/plugins.
func (s *Server) plugins(w http.ResponseWriter, _ *http.Request) {
	g := s.k.Current()
	if g == nil {
		s.fail(w, kernelError(s.notRunning()))
		return
	}
	states := map[string]string{}
	for _, p := range s.k.Plugins() {
		states[p.Name] = string(p.State)
	}
	a := PluginsAnswer{Generation: g.Number(), Hash: g.Hash(), Plugins: []Member{}}
	for _, m := range g.Members() {
		a.Plugins = append(a.Plugins, Member{Name: m.Package.Name, Version: versionOf(m), Status: string(m.Status),
			Required: m.Required, Adopted: m.Adopted, State: states[m.Package.Name], Reason: m.Reason})
	}
	slices.SortFunc(a.Plugins, func(x, y Member) int { return strings.Compare(x.Name, y.Name) })
	s.answer(w, a)
}

// versionOf is the member's package version.
func versionOf(m *generation.Member) string {
	if v := m.Package.Manifest.Version; v != nil {
		return v.String()
	}
	return ""
}

// plan answers GET /v1/plan.
func (s *Server) plan(w http.ResponseWriter, r *http.Request) {
	p, err := s.k.Plan(r.Context())
	if err != nil {
		s.fail(w, kernelError(err))
		return
	}
	s.answer(w, p)
}

// reload answers POST /v1/reload.
func (s *Server) reload(w http.ResponseWriter, r *http.Request) {
	if e := noBody(r); e != nil {
		s.fail(w, e)
		return
	}
	res, err := s.k.Reload(r.Context())
	if s.opts.OnReload != nil {
		s.opts.OnReload(res, err)
	}
	if err != nil {
		e := kernelError(err)
		var be *generation.BuildError
		if errors.As(err, &be) {
			e.Status, e.Code = http.StatusConflict, CodeReloadRolledBack
		}
		if g := s.k.Current(); g != nil {
			e.Generation = g.Number()
		}
		s.fail(w, e)
		return
	}
	s.answer(w, ReloadAnswer{Published: res.Published, Generation: res.Generation.Number(), Hash: res.Generation.Hash(), Plan: res.Plan})
}

// restart answers POST /v1/plugins/{name}/restart.
func (s *Server) restart(w http.ResponseWriter, r *http.Request) {
	if e := noBody(r); e != nil {
		s.fail(w, e)
		return
	}
	name := r.PathValue("name")
	if err := s.k.RestartPlugin(r.Context(), name); err != nil {
		e := kernelError(err)
		if e.Code == CodeInternal || e.Code == CodePluginError {
			e.Status, e.Code, e.Plugin = http.StatusBadGateway, CodeRestartFailed, name
		}
		s.fail(w, e)
		return
	}
	a := RestartAnswer{Plugin: name}
	if g := s.k.Current(); g != nil {
		a.Generation = g.Number()
	}
	s.answer(w, a)
}

// stop answers POST /v1/stop: it writes the answer, then asks the host to
// stop (Options.OnStop).
func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	if e := noBody(r); e != nil {
		s.fail(w, e)
		return
	}
	if s.opts.OnStop == nil {
		s.fail(w, &Error{Status: http.StatusNotImplemented, Code: CodeNotSupported,
			Message: "this host does not stop through the admin API (no Options.OnStop)"})
		return
	}
	s.answer(w, StopAnswer{Stopping: true, PID: os.Getpid()})
	http.NewResponseController(w).Flush()
	s.opts.OnStop()
}

// noBody refuses a request body other than empty or {}.
func noBody(r *http.Request) *Error {
	var v struct{}
	e := decode(r, &v)
	if e != nil && e.Code == CodeInvalidJSON && strings.HasSuffix(e.Message, ": EOF") {
		return nil // no body at all
	}
	return e
}

// call answers POST /v1/call.
func (s *Server) call(w http.ResponseWriter, r *http.Request) {
	var req CallRequest
	if e := decode(r, &req); e != nil {
		s.fail(w, e)
		return
	}
	if req.Target == "" {
		s.fail(w, &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: "call: target is required"})
		return
	}
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage("null")
	}
	g := s.k.Current()
	if g != nil {
		if e := unknownPointOrSlot(g, req); e != nil {
			s.fail(w, e)
			return
		}
	}
	a, err := s.dispatch(r, req, input)
	if err != nil {
		if err.Code == CodeUnknownTarget && g != nil {
			err.Message += didYouMean(req.Target, targets(g, req.Kind))
		}
		s.fail(w, err)
		return
	}
	s.answer(w, a)
}

// dispatch makes the call req asks for.
func (s *Server) dispatch(r *http.Request, req CallRequest, input json.RawMessage) (*CallAnswer, *Error) {
	ctx := r.Context()
	a := &CallAnswer{Kind: req.Kind, Target: req.Target}
	var err error
	switch req.Kind {
	case KindProvider:
		a.Output, err = s.k.CallProvider(ctx, req.Target, input)
	case KindAction:
		a.Output, err = s.k.RunAction(ctx, req.Target, input)
	case KindStrategy:
		var res *kernel.StrategyResult
		if res, err = s.k.Strategy(ctx, contribution.Slot(req.Target), input); err == nil {
			a.Output, a.Owner, a.HostDefault, a.Generation = res.Output, res.Owner, res.HostDefault, res.Generation
			if res.Err != nil {
				a.Error = res.Err.Error()
			}
		}
	case KindIntercept:
		var res *kernel.InterceptResult
		if res, err = s.k.Intercept(ctx, contribution.Point(req.Target), input); err == nil {
			interceptAnswer(a, res)
		}
	default:
		return s.invokeHostKind(ctx, a, req, input)
	}
	if err != nil {
		return nil, kernelError(err)
	}
	return a, nil
}

func interceptAnswer(a *CallAnswer, res *kernel.InterceptResult) {
	a.Payload, a.Denied, a.DeniedBy, a.Reason, a.Generation = res.Payload, res.Denied, res.DeniedBy, res.Reason, res.Generation
	a.Steps = make([]Step, 0, len(res.Steps))
	for _, st := range res.Steps {
		step := Step{Plugin: st.Plugin, Decision: st.Decision, Reason: st.Reason, ElapsedMS: ms(st.Elapsed)}
		if st.Err != nil {
			step.Error = st.Err.Error()
		}
		a.Steps = append(a.Steps, step)
	}
}

// kernelError maps an error of the kernel to an error answer.
func kernelError(err error) *Error {
	e := &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: err.Error()}
	var (
		perr  *kernel.PluginError
		ierr  *kernel.InputError
		berr  *generation.BuildError
		proto *protocol.Error
	)
	switch {
	case errors.Is(err, kernel.ErrClosed):
		e.Status, e.Code = http.StatusServiceUnavailable, CodeClosed
	case errors.Is(err, kernel.ErrNotStarted):
		e.Status, e.Code = http.StatusServiceUnavailable, CodeNotStarted
	case errors.Is(err, kernel.ErrUnknownPlugin):
		e.Status, e.Code = http.StatusNotFound, CodeUnknownPlugin
	case errors.Is(err, kernel.ErrUnknownTarget):
		e.Status, e.Code = http.StatusNotFound, CodeUnknownTarget
	case errors.As(err, &ierr):
		e.Status, e.Code, e.Plugin = http.StatusUnprocessableEntity, CodeInputRefused, ierr.Plugin
	case errors.As(err, &perr):
		e.Status, e.Code, e.Plugin = http.StatusBadGateway, CodePluginError, perr.Plugin
		if errors.As(err, &proto) {
			e.PluginError = proto
		}
	}
	if errors.As(err, &berr) {
		e.Problems = berr.Problems
	}
	return e
}

// bakeOf is a bake as the API shows it, nil for none.
func bakeOf(b *observe.BakeStatus) *Bake {
	if b == nil {
		return nil
	}
	out := &Bake{State: b.State, Version: b.Version, Digest: b.Digest, FromVersion: b.FromVersion, FromDigest: b.FromDigest,
		Started: b.Started, Until: b.Until, MaxErrorRate: b.MaxErrorRate, MinCalls: b.MinCalls, Calls: b.Calls, Errors: b.Errors, Reason: b.Reason}
	if !b.Ended.IsZero() {
		ended := b.Ended
		out.Ended = &ended
	}
	return out
}

// lazyActivity is a lazy member's activity as the API shows it, nil for
// an eager one.
func lazyActivity(z *observe.LazyStatus) *LazyActivity {
	if z == nil {
		return nil
	}
	ms := func(d time.Duration) float64 { return millis(d.Round(time.Microsecond)) }
	a := &LazyActivity{Declarations: z.Declarations, ActivatedBy: z.ActivatedBy, StartMS: ms(z.StartDuration),
		SpawnMS: ms(z.SpawnDuration), HandshakeMS: ms(z.HandshakeDuration),
		FirstCallMS: ms(z.FirstCall), LastUsed: z.LastUsed, Activations: z.Activations, IdleStops: z.IdleStops}
	if !z.Activated.IsZero() {
		at := z.Activated
		a.Activated = &at
	}
	return a
}
