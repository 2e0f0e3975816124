package sidecar

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// handshakeTimeout returns the per-plugin handshake bound.
func (c *Client) handshakeTimeout() (d time.Duration, source string) {
	d, source = c.opts.HandshakeTimeout, "the host's handshake timeout"
	if t := c.rt.HandshakeTimeout; t > 0 {
		d, source = t, "runtime.handshake_timeout"
	}
	return min(d, wire.MaxHandshakeTimeout), source
}

// handshake sends initialize and checks the answer, redacted: the answer
// returned, kept as Declarations, holds no secret text. It returns the
// phase the failure belongs to.
func (c *Client) handshake(ctx context.Context, dataDir string) (*protocol.InitializeResult, string, error) {
	d, source := c.handshakeTimeout()
	hctx, cancel := context.WithTimeoutCause(ctx, d, &handshakeTimeoutError{d, source})
	defer cancel()
	params := protocol.InitializeParams{
		ProtocolVersion: protocol.Version,
		Host:            c.opts.Host,
		Plugin: protocol.PluginInfo{
			Name:    c.pkg.Name,
			Version: c.version(),
			DataDir: dataDir,
		},
		Config:   c.opts.Config,
		Session:  c.opts.Session,
		Features: wire.AllFeatures.Names(),
	}
	res := new(protocol.InitializeResult)
	if err := c.roundTrip(hctx, wire.MethodInitialize, params, res, callInit); err != nil {
		var te *handshakeTimeoutError
		var pe *protocol.Error
		switch {
		case errors.As(err, &te):
		case errors.As(err, &pe):
			err = fmt.Errorf("initialize failed: %w", err)
		case hctx.Err() != nil:
			err = fmt.Errorf("no answer to initialize: %w", err)
		}
		return nil, phaseHandshake, err
	}
	// Everything below quotes the answer or keeps it: redacted first.
	var secretIDs []string
	if c.opts.redacting {
		res, secretIDs = c.redact.declarations(res)
	}
	v, err := checkProtocolVersion(res.ProtocolVersion)
	if err != nil {
		return nil, phaseVersion, err
	}
	c.streamBytes = !v.LessThan(windowBytesSince)
	problems := append(checkDeclarations(c.pkg, c.opts.Kinds, res), c.featureProblems(res)...)
	if problems = append(problems, secretIDs...); len(problems) > 0 {
		return nil, phaseDeclarations, &declarationError{manifest: c.pkg.ManifestPath, problems: problems}
	}
	return res, "", nil
}

// checkInitAnswer returns a protocol error for a response that arrives
// before the handshake completed with an id other than initialize's: the
// only request the host has sent is initialize, so the plugin answered with
// the wrong id (which would otherwise be dropped and reported as no answer
// within the handshake timeout).
func (c *Client) checkInitAnswer(m *wire.Message) error {
	if c.handshook.Load() {
		return nil
	}
	want := c.initID.Load()
	if id, err := strconv.ParseInt(string(m.ID), 10, 64); err == nil && id == want && want != 0 {
		return nil
	}
	return fmt.Errorf("%w: initialize answered id %s; expected %d", ErrProtocol, c.redact(string(m.ID)), want)
}

// handshakeTimeoutError is the cause of a handshake that ran out of its
// per-plugin time. It matches errHandshakeTimeout and
// context.DeadlineExceeded.
type handshakeTimeoutError struct {
	d      time.Duration
	source string
}

func (e *handshakeTimeoutError) Error() string {
	return fmt.Sprintf("no answer to initialize within %v (%s)", e.d, e.source)
}

func (e *handshakeTimeoutError) Is(target error) bool {
	return target == errHandshakeTimeout || target == context.DeadlineExceeded
}

// windowBytesSince is the protocol version from which a producer honours a
// stream's window_bytes (docs/protocol.md §5.12).
var windowBytesSince = semver.MustParse("1.2.0")

// hostVersion is protocol.Version parsed once: semver.NewVersion matches a
// regular expression, a few microseconds of every start.
var hostVersion = sync.OnceValue(func() *semver.Version { return semver.MustParse(protocol.Version) })

// checkProtocolVersion returns the protocol version the plugin answered,
// or a *protocol.VersionError unless it has the host's major. The answer
// is read as
// semver.NewVersion reads it (so "v1" or "1.2" is accepted); a strict
// MAJOR.MINOR.PATCH, the usual answer, is parsed without NewVersion's
// regular expression, to the same version.
func checkProtocolVersion(answered string) (*semver.Version, error) {
	host := hostVersion()
	v, err := semver.StrictNewVersion(answered)
	if err != nil {
		v, err = semver.NewVersion(answered)
	}
	if err != nil {
		return nil, fmt.Errorf("initialize result: protocol_version %q is not a semantic version", answered)
	}
	if v.Major() == host.Major() {
		return v, nil
	}
	upgrade := "plugin"
	if v.Major() > host.Major() {
		upgrade = "host"
	}
	return nil, protocol.NewVersionError(answered, upgrade)
}

// checkDeclarations returns every declaration in res that p's manifest
// does not authorize, each prefixed with its path in the result; kinds
// are the host's (Options.Kinds). Interceptor priorities are bounded by
// package contribution's.
func checkDeclarations(p *pluginpkg.Package, kinds []contribution.Kind, res *protocol.InitializeResult) []string {
	var problems []string
	add := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	rt := p.Manifest.Runtime
	if res.Name != p.Name {
		add("name: the plugin calls itself %q, its manifest %q", res.Name, p.Name)
	}
	for i, d := range res.Interceptors {
		if !slices.Contains(rt.Intercepts, contribution.Point(d.Point)) {
			add("interceptors[%d]: point %q is not listed in runtime.intercepts", i, d.Point)
		}
		if d.Priority != nil && !validPriority(*d.Priority) {
			add("interceptors[%d]: priority %d is outside [%d, %d]", i, *d.Priority, contribution.MinPriority, contribution.MaxPriority)
		}
	}
	for i, d := range res.Strategies {
		if !slices.Contains(rt.Replaces, contribution.Slot(d.Slot)) {
			add("strategies[%d]: slot %q is not listed in runtime.replaces", i, d.Slot)
		}
	}
	for i, d := range res.Provides {
		if msg := checkProvided(p.Manifest.Provides, d); msg != "" {
			add("provides[%d]: %s", i, msg)
		}
	}
	return append(problems, checkContributions(rt, kinds, res.Contributions)...)
}

// validPriority reports whether an interceptor, or a contribution of a
// host-declared kind, may declare priority.
func validPriority(priority int) bool {
	return priority >= contribution.MinPriority && priority <= contribution.MaxPriority
}

// checkProvided returns why provides, the manifest's, does not authorize
// d, or "". The declared version must be a strict semantic version
// (MAJOR.MINOR.PATCH, as in the manifest) equal to the manifest's.
func checkProvided(provides []capability.Provided, d protocol.CapabilityDecl) string {
	v, verr := semver.StrictNewVersion(d.Version)
	var versions []string
	for _, p := range provides {
		if string(p.Key) != d.Capability {
			continue
		}
		if verr == nil && p.Version != nil && v.Equal(p.Version) {
			return ""
		}
		if p.Version != nil {
			versions = append(versions, p.Version.String())
		}
	}
	switch {
	case len(versions) == 0:
		return fmt.Sprintf("capability %q is not listed in provides", d.Capability)
	case verr != nil:
		return fmt.Sprintf("capability %q version %q is not a semantic version MAJOR.MINOR.PATCH (the manifest's: %s)", d.Capability, d.Version, joinQuoted(versions))
	}
	return fmt.Sprintf("capability %q version %q is not the manifest's (%s)", d.Capability, d.Version, joinQuoted(versions))
}

func joinQuoted(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}
