//go:build unix

package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/observe"
)

// lag records how late a 10ms timer fires at most: how starved of CPU the
// test process is, which stretches every deadline alike.
func (r *chaosRig) lag(ctx context.Context) {
	const tick = 10 * time.Millisecond
	t := time.NewTimer(tick)
	defer t.Stop()
	for start := time.Now(); ; start = time.Now() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if late := int64(time.Since(start) - tick); late > r.st.timerLag.Load() {
			r.st.timerLag.Store(late)
		}
		t.Reset(tick)
	}
}

// killer SIGKILLs a random running sidecar every 100-400ms, counting the
// fault against its plugin first.
func (r *chaosRig) killer(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(100+rand.IntN(300)) * time.Millisecond):
		}
		var alive []int
		var names []string
		for _, c := range runningClients(r.k) {
			if c.Err() == nil {
				alive, names = append(alive, c.PID()), append(names, c.Name())
			}
		}
		if len(alive) == 0 {
			continue
		}
		i := rand.IntN(len(alive))
		r.faults[names[i]].Add(1)
		if syscall.Kill(alive[i], syscall.SIGKILL) == nil {
			r.st.kills.Add(1)
		}
	}
}

// reloader, every 200-400ms, either breaks a required package's manifest
// and reloads (which must fail), or changes a random manifest and
// reloads.
func (r *chaosRig) reloader(ctx context.Context) {
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(200+rand.IntN(200)) * time.Millisecond):
		}
		r.st.reloads.Add(1)
		if rand.IntN(3) == 0 {
			r.breakRequired(ctx)
			continue
		}
		j := rand.IntN(len(r.plugs))
		r.plugs[j].version = fmt.Sprintf("1.0.%d", i+1)
		data, _ := json.Marshal(manifest(r.plugs[j]))
		if err := os.WriteFile(r.manifestPath(r.plugs[j].name), data, 0o644); err != nil {
			r.st.violate("rewriting a manifest: %v", err)
		}
		res, err := r.k.Reload(ctx)
		switch {
		case err == nil && res.Published:
			r.starts.add(startEntry{reloaded: res.Generation.Number()})
		case err != nil:
			// A required plugin crashing during its start rolls the reload
			// back; the current generation must stay as it was.
			r.st.failedReloads.Add(1)
			r.starts.add(startEntry{failedReload: true})
			if ctx.Err() == nil && !isBuildError(err) {
				r.st.violate("reload failed with an untyped error: %v", err)
			}
		}
	}
}

// medic, every 300ms, restarts the plugins failed past their crash budget
// (RestartPlugin), as an operator would: a plugin stays failed at most
// about that long.
func (r *chaosRig) medic(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
		for _, st := range r.k.Plugins() {
			if st.State == observe.StateFailed && strings.HasPrefix(st.Reason, "crashed ") {
				r.restart(ctx, st.Name)
			}
		}
	}
}

// restart restarts the plugin name, failed past its crash budget, with
// RestartPlugin.
func (r *chaosRig) restart(ctx context.Context, name string) {
	r.st.explicitRestarts.Add(1)
	err := r.k.RestartPlugin(ctx, name)
	// Its budget starts afresh, whether it started or not (a failed start
	// is its first crash).
	r.starts.add(startEntry{restarted: name})
	if err != nil && ctx.Err() == nil && !isBuildError(err) && !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
		r.st.violate("RestartPlugin(%q) failed with %v, which does not name it", name, err)
	}
}

// breakRequired writes a manifest that does not parse for a random
// required plugin and reloads: the reload must fail with a BuildError
// naming the package, the plugin must still be a member of the current
// generation; then the manifest is restored.
func (r *chaosRig) breakRequired(ctx context.Context) {
	var names []string
	for _, p := range r.plugs {
		if p.required {
			names = append(names, p.name)
		}
	}
	name := names[rand.IntN(len(names))]
	path := r.manifestPath(name)
	good, err := os.ReadFile(path)
	if err != nil {
		r.st.violate("reading a manifest: %v", err)
		return
	}
	defer func() {
		if err := os.WriteFile(path, good, 0o644); err != nil {
			r.st.violate("restoring a manifest: %v", err)
		}
	}()
	if err := os.WriteFile(path, good[:len(good)/2], 0o644); err != nil {
		r.st.violate("breaking a manifest: %v", err)
		return
	}
	r.st.brokenReloads.Add(1)
	r.st.failedReloads.Add(1)
	_, err = r.k.Reload(ctx)
	var ue *generation.UnavailableError
	switch {
	case err == nil:
		r.st.violate("a reload with a broken manifest of required %q succeeded", name)
	case ctx.Err() != nil:
	case !isBuildError(err) || !errors.As(err, &ue) || ue.Package != name:
		r.st.violate("a reload with a broken manifest of required %q failed with %v, want a BuildError naming it", name, err)
	}
	if g := r.k.Current(); g == nil || g.Member(name) == nil {
		r.st.violate("required %q left the current generation after a rejected reload", name)
	}
	r.checkGeneration()
}

func (r *chaosRig) manifestPath(name string) string {
	return filepath.Join(r.home, "packages", name, "plugin.json")
}

func isBuildError(err error) bool {
	var be *generation.BuildError
	return errors.As(err, &be)
}
