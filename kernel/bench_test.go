package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/kernel/config"
)

// benchKernel starts a kernel on plugs and closes it when b ends.
func benchKernel(b *testing.B, cfg config.Config) *Kernel {
	b.Helper()
	k, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := k.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { k.Close(context.Background()) })
	return k
}

// BenchmarkChain compares an interceptor chain of three sidecars through
// the kernel with the same three calls made directly on the clients: the
// difference is the kernel's own overhead per chain.
func BenchmarkChain(b *testing.B) {
	var plugs []plug
	for _, n := range []string{"one", "two", "three"} {
		plugs = append(plugs, plug{name: n, intercepts: []string{"tool.before"},
			env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=continue"}})
	}
	k := benchKernel(b, testConfig(writeHome(b, plugs...)))
	payload := json.RawMessage(`{"tool":"bash","args":["ls","-l"]}`)
	ctx := context.Background()
	b.Run("kernel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := k.Intercept(ctx, "tool.before", payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		clients := runningClients(k)
		b.ReportAllocs()
		for b.Loop() {
			for _, c := range clients {
				if _, err := c.Intercept(ctx, "tool.before", payload); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkPublish1000 builds and publishes a generation of 1,000
// contributions (10 adopted sidecars declaring 100 providers each): the
// cost of resolution, the registry, fingerprints and the swap, with no
// process started.
func BenchmarkPublish1000(b *testing.B) {
	refs := make([]string, 100)
	for i := range refs {
		refs[i] = fmt.Sprintf("ref%03d", i)
	}
	var plugs []plug
	for i := range 10 {
		plugs = append(plugs, plug{name: fmt.Sprintf("p%02d", i), env: map[string]string{"SCRIPT_PROVIDERS": strings.Join(refs, ",")}})
	}
	k := benchKernel(b, testConfig(writeHome(b, plugs...)))
	if n := k.Current().Registry().Len(); n != 1000 {
		b.Fatalf("registry has %d contributions, want 1000", n)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		k.buildMu.Lock()
		cur := k.current.Load()
		var adopt []string
		for _, m := range cur.gen.Members() {
			adopt = append(adopt, m.Package.Name)
		}
		r, err := k.build(ctx, k.inputs(nil), cur, adopt)
		if err != nil {
			b.Fatal(err)
		}
		k.publish(r)
		k.buildMu.Unlock()
	}
	b.StopTimer()
	k.retiring.Wait()
}

// BenchmarkReload64 measures Reload on 64 running sidecars: with no change
// (kernel time only, zero spawns) and with one package changed (about one
// sidecar start).
func BenchmarkReload64(b *testing.B) {
	log := spawnLog(b.TempDir() + "/pids")
	var plugs []plug
	for i := range 64 {
		plugs = append(plugs, log.with(plug{name: fmt.Sprintf("p%02d", i), intercepts: []string{"tool.before"},
			env: map[string]string{"SCRIPT_INTERCEPT": "tool.before=continue"}}))
	}
	home := writeHome(b, plugs...)
	cfg := testConfig(home)
	k := benchKernel(b, cfg)
	ctx := context.Background()
	b.Run("nochange", func(b *testing.B) {
		before := len(log.pids(b))
		b.ReportAllocs()
		for b.Loop() {
			res, err := k.Reload(ctx)
			if err != nil || res.Published {
				b.Fatalf("reload: %v (published %v)", err, res != nil && res.Published)
			}
		}
		b.ReportMetric(float64(len(log.pids(b))-before)/float64(b.N), "spawns/op")
	})
	b.Run("floor", func(b *testing.B) {
		// What any change detection must do: list the packages, read the
		// state file, and stat every manifest and executable.
		b.ReportAllocs()
		for b.Loop() {
			entries, err := os.ReadDir(filepath.Join(home, "packages"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := os.ReadFile(filepath.Join(home, "state.json")); err != nil {
				b.Fatal(err)
			}
			for _, e := range entries {
				dir := filepath.Join(home, "packages", e.Name())
				if _, err := os.Stat(filepath.Join(dir, "plugin.json")); err != nil {
					b.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(dir, "bin", "plugin")); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("change1of64", func(b *testing.B) {
		before := len(log.pids(b))
		p := plugs[7]
		i := 0
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			i++
			p.version = fmt.Sprintf("1.0.%d", i)
			rewrite(b, home, p)
			b.StartTimer()
			res, err := k.Reload(ctx)
			if err != nil || !res.Published {
				b.Fatalf("reload: %v", err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(len(log.pids(b))-before)/float64(b.N), "spawns/op")
		k.retiring.Wait()
	})
}

// BenchmarkPlan64 is the floor for BenchmarkReload64/nochange: loading the
// home and planning against an empty snapshot, which any reload must do.
func BenchmarkPlan64(b *testing.B) {
	var plugs []plug
	for i := range 64 {
		plugs = append(plugs, plug{name: fmt.Sprintf("p%02d", i)})
	}
	k, err := New(testConfig(writeHome(b, plugs...)))
	if err != nil {
		b.Fatal(err)
	}
	snap := &generation.Snapshot{Format: generation.SnapshotFormat}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := k.plan(snap, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallProviderSchema measures CallProvider on a provider with a
// small, realistic input schema (searchSchema), with input validation off
// and on: the difference is the cost of validating one input (the schema
// is compiled on the first call of each generation, outside the loop).
// check is the validation alone, without the call.
func BenchmarkCallProviderSchema(b *testing.B) {
	const id = "plugin/finder/search"
	input := json.RawMessage(`{"q": "context compaction", "limit": 20}`)
	for _, mode := range []string{"off", "on", "check"} {
		b.Run(mode, func(b *testing.B) {
			cfg := testConfig(writeHome(b, schemaPlug(b)))
			cfg.ValidateProviderInput = mode != "off"
			k := benchKernel(b, cfg)
			ctx := context.Background()
			if _, err := k.CallProvider(ctx, id, input); err != nil {
				b.Fatal(err)
			}
			call := func() error {
				_, err := k.CallProvider(ctx, id, input)
				return err
			}
			if mode == "check" {
				l := k.current.Load()
				c, _ := l.gen.Registry().Provider(id)
				call = func() error { return k.checkInput(l, c, input) }
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
