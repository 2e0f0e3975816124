package kernel

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/builder"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/config"
)

// Defaults applied by withDefaults, documented on config.Config's fields
// and in docs/config.md. The pool size and startup budget are
// builder.DefaultPoolSize and builder.DefaultBudget, the handshake timeout
// wire.DefaultHandshakeTimeout; the heartbeat and hang timeouts are left
// zero for package sidecar, which applies them where it pings. Each
// default's value has one owner. None is exported: a host reads a default
// in the docs, and leaves the field zero to get it.
const (
	defaultDrainTimeout = 30 * time.Second
	// defaultInterceptDeadline bounds one interceptor call.
	defaultInterceptDeadline = 5 * time.Second
	// defaultCallDeadline bounds one strategy, provider or action call.
	defaultCallDeadline = 30 * time.Second
	// defaultMaxCallDepth bounds how deep plugins' calls nest.
	defaultMaxCallDepth = 8
)

// withDefaults returns c with every zero optional field set to its default.
func withDefaults(c config.Config) config.Config {
	c.PoolSize = cmp.Or(c.PoolSize, builder.DefaultPoolSize)
	c.StartupBudget = cmp.Or(c.StartupBudget, builder.DefaultBudget)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, defaultDrainTimeout)
	c.Deadlines.Intercept = cmp.Or(c.Deadlines.Intercept, defaultInterceptDeadline)
	c.Deadlines.Strategy = cmp.Or(c.Deadlines.Strategy, defaultCallDeadline)
	c.Deadlines.Provider = cmp.Or(c.Deadlines.Provider, defaultCallDeadline)
	c.Deadlines.Action = cmp.Or(c.Deadlines.Action, defaultCallDeadline)
	c.Supervision = supervisionDefaults(c.Supervision)
	if c.Logger == nil { // not cmp.Or: a Logger's dynamic type may not be comparable
		c.Logger = hclog.Default()
	}
	c.FirstGeneration = cmp.Or(c.FirstGeneration, 1)
	c.MaxCallDepth = cmp.Or(c.MaxCallDepth, defaultMaxCallDepth)
	c.HandshakeTimeout = cmp.Or(c.HandshakeTimeout, wire.DefaultHandshakeTimeout)
	if c.DataRoot == "" {
		c.DataRoot = filepath.Join(c.Home, "data")
	}
	return c
}

// resolve makes c's Home and DataRoot absolute and copies the maps every
// client reads (Session, Handlers). It checks nothing: prepare has had
// config.Config.Validate check c.
func resolve(c config.Config) (config.Config, error) {
	home, err := filepath.Abs(c.Home)
	if err != nil {
		return c, fmt.Errorf("kernel: config: home %s: %w", c.Home, err)
	}
	c.Home = home
	if c.DataRoot != "" {
		root, err := filepath.Abs(c.DataRoot)
		if err != nil {
			return c, fmt.Errorf("kernel: config: data root %s: %w", c.DataRoot, err)
		}
		c.DataRoot = root
	}
	c.Session = maps.Clone(c.Session)
	c.Handlers = maps.Clone(c.Handlers)
	return c, nil
}

// Restart defaults (VS Code's extension host: 3 crashes in 5 minutes). The
// heartbeat defaults are the sidecar's, which pings.
const (
	defaultCrashBudget = 3
	defaultCrashWindow = 5 * time.Minute
	defaultBackoffMin  = 200 * time.Millisecond
	defaultBackoffMax  = 30 * time.Second
)

// supervisionDefaults returns s with every zero field of the restart
// policy set to its default. The heartbeat fields are passed to each
// sidecar as they are: package sidecar applies their defaults (zero means
// wire.DefaultHeartbeatInterval, ...), in the one place that pings.
func supervisionDefaults(s config.Supervision) config.Supervision {
	s.CrashBudget = cmp.Or(s.CrashBudget, defaultCrashBudget)
	s.CrashWindow = cmp.Or(s.CrashWindow, defaultCrashWindow)
	s.BackoffMin = cmp.Or(s.BackoffMin, defaultBackoffMin)
	s.BackoffMax = cmp.Or(s.BackoffMax, defaultBackoffMax)
	return s
}
