package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// packageDir writes p as a package directory outside any home (an
// install source) and returns it.
func packageDir(t *testing.T, p plug) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), p.name)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	linkOrCopy(t, scriptedBin, filepath.Join(dir, "bin", "plugin"))
	writeJSON(t, filepath.Join(dir, "plugin.json"), manifest(p))
	return dir
}

// bakeEvents collects k's EventBake events.
func bakeEvents(t *testing.T, k *Kernel) <-chan observe.Event {
	t.Helper()
	return eventsOfType(t, k, observe.EventBake)
}

// waitBake waits for the bake event of state on ch, failing on any other
// ending state first.
func waitBake(t *testing.T, ch <-chan observe.Event, state string) observe.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-ch:
			if e.State == state {
				return e
			}
			if e.State == observe.BakeRollbackFailed || (e.State == observe.BakePassed && state != observe.BakePassed) {
				t.Fatalf("bake event %s (%s, %v) while waiting for %s", e.State, e.Message, e.Err, state)
			}
		case <-timeout:
			t.Fatalf("no bake event %s within 30s", state)
			return observe.Event{}
		}
	}
}

// TestBakeReturnsOnItsOwn: an upgrade on bake whose new version fails
// (crashes past its budget on every call, or answers errors over the
// bake's max error rate) is rolled back by the kernel itself: the files,
// the state (no bake left, the old digest) and the generation, with
// events and status saying why; a host call made once the bake failed
// is served by the old version, whatever the callers do meanwhile.
func TestBakeReturnsOnItsOwn(t *testing.T) {
	for _, tt := range []struct {
		name      string
		behaviour string
		bake      pluginpkg.Bake
		reason    string
	}{
		{"crash budget", "crash", pluginpkg.Bake{Duration: time.Minute}, "crashed 4 times within 1m0s (budget 3)"},
		{"error rate", "fail", pluginpkg.Bake{Duration: time.Minute, MaxErrorRate: 0.5, MinCalls: 6}, "over its max error rate of 50%"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Cleanup(func() { noChildren(t) }) // after the kernel's Close
			v1 := plug{name: "svc", version: "1.0.0", env: map[string]string{"SCRIPT_PROVIDERS": "echo"}}
			home := writeHome(t, v1)
			cfg := testConfig(home)
			cfg.Supervision = fastSupervision()
			k := startKernel(t, cfg)
			events := bakeEvents(t, k)
			call := func() error {
				_, err := k.CallProvider(context.Background(), "plugin/svc/echo", json.RawMessage(`"x"`))
				return err
			}
			if err := call(); err != nil {
				t.Fatal(err)
			}
			v2 := plug{name: "svc", version: "2.0.0", env: map[string]string{"SCRIPT_PROVIDERS": "echo=" + tt.behaviour}}
			bake := tt.bake
			res, err := pluginpkg.InstallSource(home, packageDir(t, v2), pluginpkg.InstallOptions{Upgrade: true, Bake: &bake})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.Reload(context.Background()); err != nil {
				t.Fatal(err)
			}
			if e := waitBake(t, events, observe.BakeWatching); !strings.Contains(e.Message, "watching svc 2.0.0 (from 1.0.0) for 1m0s") {
				t.Errorf("watching event: %q", e.Message)
			}
			if st := k.Plugins()[0].Bake; st == nil || st.State != observe.BakeWatching || st.Version != "2.0.0" || st.Digest != res.Digest ||
				st.FromVersion != "1.0.0" || st.FromDigest != res.PreviousDigest || !st.Until.Equal(st.Started.Add(time.Minute)) {
				t.Errorf("bake status while it runs: %+v", st)
			}

			// Callers keep calling; each call that starts once the bake
			// failed must succeed.
			var failedAt atomic.Int64 // unix nanos of the rolling-back event
			var late, served atomic.Int64
			var lateErr atomic.Value
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						started := time.Now().UnixNano()
						err := call()
						if f := failedAt.Load(); f != 0 && started > f {
							if err != nil {
								late.Add(1)
								lateErr.Store(err)
							} else {
								served.Add(1)
							}
						}
					}
				}()
			}
			failing := waitBake(t, events, observe.BakeRollingBack)
			failedAt.Store(failing.Time.UnixNano())
			back := waitBake(t, events, observe.BakeRolledBack)
			for served.Load() < 20 && late.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			close(stop)
			wg.Wait()
			t.Logf("returned to 1.0.0 %v after the bake failed (%s)", back.Elapsed, failing.Message)
			if !strings.Contains(failing.Message, tt.reason) {
				t.Errorf("rolling-back event %q, want the reason %q", failing.Message, tt.reason)
			}
			if n := late.Load(); n > 0 {
				t.Errorf("%d calls started after the bake failed failed, the last: %v", n, lateErr.Load())
			}

			st := k.Plugins()[0]
			if st.Version != "1.0.0" || st.State != observe.StateReady || st.Bake == nil || st.Bake.State != observe.BakeRolledBack ||
				!strings.Contains(st.Bake.Reason, tt.reason) || st.Bake.Ended.IsZero() || st.Bake.Errors == 0 {
				t.Errorf("status after the return: %+v, bake %+v", st, st.Bake)
			}
			inst, err := pluginpkg.LoadInstalled(home)
			if err != nil {
				t.Fatal(err)
			}
			if p := inst.Packages[0]; p.Manifest.Version.String() != "1.0.0" || p.Bake != nil || p.Digest != res.PreviousDigest {
				t.Errorf("home after the return: %s %s bake %+v", p.Manifest.Version, p.Digest, p.Bake)
			}
			if err := call(); err != nil {
				t.Errorf("a call after the return: %v", err)
			}
		})
	}
}

// bakeKernel starts a kernel on a home holding v1, subscribed to its bake
// events.
func bakeKernel(t *testing.T, v1 plug) (home string, k *Kernel, events <-chan observe.Event) {
	t.Helper()
	home = writeHome(t, v1)
	k = startKernel(t, testConfig(home))
	return home, k, bakeEvents(t, k)
}

// upgradeOnBake installs v2 over the home's version with bake and reloads
// k, returning the reload's error.
func upgradeOnBake(t *testing.T, k *Kernel, home string, v2 plug, bake pluginpkg.Bake) error {
	t.Helper()
	if _, err := pluginpkg.InstallSource(home, packageDir(t, v2), pluginpkg.InstallOptions{Upgrade: true, Bake: &bake}); err != nil {
		t.Fatal(err)
	}
	_, err := k.Reload(context.Background())
	return err
}

// TestBakePasses: a bake that runs its duration out passes: the state
// file no longer records it, the version stays, status says passed.
func TestBakePasses(t *testing.T) {
	v1 := plug{name: "svc", version: "1.0.0", env: map[string]string{"SCRIPT_PROVIDERS": "echo"}}
	home, k, events := bakeKernel(t, v1)
	v2 := v1
	v2.version = "2.0.0"
	if err := upgradeOnBake(t, k, home, v2, pluginpkg.Bake{Duration: 50 * time.Millisecond, MaxErrorRate: 0.1}); err != nil {
		t.Fatal(err)
	}
	waitBake(t, events, observe.BakePassed)
	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	if p := inst.Packages[0]; p.Manifest.Version.String() != "2.0.0" || p.Bake != nil {
		t.Errorf("after the bake passed: %s, bake %+v", p.Manifest.Version, p.Bake)
	}
	if st := k.Plugins()[0]; st.Version != "2.0.0" || st.Bake == nil || st.Bake.State != observe.BakePassed {
		t.Errorf("status: %+v bake %+v", st, st.Bake)
	}
	// A reload after the pass starts no second watch.
	if _, err := k.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-events:
		t.Errorf("a bake event after the pass: %+v", e)
	default:
	}
}

// TestBakeEndsWithTheVersion: a manual rollback during a bake ends the
// watch without any rollback of the kernel's own, and a bake of a new
// version that fails to start is rolled back at once.
func TestBakeEndsWithTheVersion(t *testing.T) {
	v1 := plug{name: "svc", version: "1.0.0", env: map[string]string{"SCRIPT_PROVIDERS": "echo"}}
	home, k, events := bakeKernel(t, v1)
	v2 := v1
	v2.version = "2.0.0"
	if err := upgradeOnBake(t, k, home, v2, pluginpkg.Bake{Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	waitBake(t, events, observe.BakeWatching)
	if _, err := pluginpkg.Rollback(home, "svc"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := k.Plugins()[0]; st.Version != "1.0.0" || st.Bake != nil {
		t.Errorf("after a manual rollback: %+v bake %+v", st, st.Bake)
	}

	v3 := v1
	v3.version = "3.0.0"
	v3.env = map[string]string{"SCRIPT_START": "exit"}
	if err := upgradeOnBake(t, k, home, v3, pluginpkg.Bake{Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	e := waitBake(t, events, observe.BakeRollingBack)
	if !strings.Contains(e.Message, "failed to start") {
		t.Errorf("rolling-back event: %q", e.Message)
	}
	waitBake(t, events, observe.BakeRolledBack)
	if st := k.Plugins()[0]; st.Version != "1.0.0" || st.State != observe.StateReady {
		t.Errorf("after a failed start's return: %+v", st)
	}
	if _, err := pluginpkg.RollbackBake(home, "svc", "x"); !errors.Is(err, pluginpkg.ErrBakeEnded) {
		t.Errorf("RollbackBake after the return: %v", err)
	}
}

// TestBakeRequiredFailsToStart: a required plugin's version under bake
// that fails to start fails the reload (the previous version keeps
// running), and the kernel puts the previous version's files back, so
// that the home runs what it holds and the next start does not fail.
func TestBakeRequiredFailsToStart(t *testing.T) {
	v1 := plug{name: "svc", version: "1.0.0", required: true, env: map[string]string{"SCRIPT_PROVIDERS": "echo"}}
	home, k, events := bakeKernel(t, v1)
	v2 := v1
	v2.version, v2.env = "2.0.0", map[string]string{"SCRIPT_START": "exit"}
	if err := upgradeOnBake(t, k, home, v2, pluginpkg.Bake{Duration: time.Hour}); err == nil {
		t.Fatal("a reload whose required plugin fails to start succeeded")
	}
	if e := waitBake(t, events, observe.BakeRollingBack); !strings.Contains(e.Message, "failed to start") {
		t.Errorf("rolling-back event: %q", e.Message)
	}
	waitBake(t, events, observe.BakeRolledBack)
	inst, err := pluginpkg.LoadInstalled(home)
	if err != nil {
		t.Fatal(err)
	}
	if p := inst.Packages[0]; p.Manifest.Version.String() != "1.0.0" || p.Bake != nil {
		t.Errorf("home after the return: %s bake %+v", p.Manifest.Version, p.Bake)
	}
	if st := k.Plugins()[0]; st.Version != "1.0.0" || st.State != observe.StateReady || st.Bake == nil || st.Bake.State != observe.BakeRolledBack {
		t.Errorf("status: %+v bake %+v", st, st.Bake)
	}
	if _, err := k.CallProvider(context.Background(), "plugin/svc/echo", json.RawMessage(`1`)); err != nil {
		t.Errorf("a call after the return: %v", err)
	}
}
