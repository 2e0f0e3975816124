package kernel

import (
	"context"
	"fmt"

	"github.com/extkernel/extkernel/kernel/config"
)

// Reconfigure replaces the kernel's config with cfg and reloads under it,
// as Reload does: the plan then also reflects what the config changes
// (policy, plugin config and environment, limits, host capabilities and
// handlers, points, slots, kinds, slot owners, pool size, budget), and
// dispatch follows cfg's deadlines, strictness and bounds from the swap on.
// cfg is checked as New checks it (config.Config.Validate, with the error
// New would return); its Home, DataRoot and Logger must be the kernel's
// (the home and data directories and the logs of running plugins cannot
// move), and FirstGeneration is ignored.
//
// On any failure, a refused cfg or a reload that rolls back, the previous
// config stays in effect and the current generation keeps serving; the
// error is the reload's (a *generation.BuildError) or says what cfg may not
// change. Like Reload, it is serialized with Start, Reload, restarts and
// Close.
func (k *Kernel) Reconfigure(ctx context.Context, cfg config.Config) (*ReloadResult, error) {
	cfg, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	k.buildMu.Lock()
	defer k.buildMu.Unlock()
	old := k.config()
	switch {
	case cfg.Home != old.Home:
		return nil, fmt.Errorf("kernel: reconfigure: home %s is not the kernel's %s", cfg.Home, old.Home)
	case cfg.DataRoot != old.DataRoot:
		return nil, fmt.Errorf("kernel: reconfigure: data root %s is not the kernel's %s", cfg.DataRoot, old.DataRoot)
	case cfg.Logger != old.Logger:
		return nil, fmt.Errorf("kernel: reconfigure: the logger cannot change while plugins run")
	}
	cfg.FirstGeneration = old.FirstGeneration
	l, err := k.currentLocked()
	if err != nil {
		return nil, err
	}
	k.conf.Store(&cfg)
	k.setRedactor(cfg)
	from := l.run.Snapshot()
	res, err := func() (*ReloadResult, error) {
		in, err := k.planInputs(from, l.gen)
		if err != nil {
			return nil, err
		}
		return k.apply(ctx, l, from, in)
	}()
	if err != nil {
		k.conf.Store(old)
		k.setRedactor(*old)
		return nil, err
	}
	return res, nil
}
