//go:build linux && !extkernel_portable

package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/kernel/hostcap"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestWaysOutConfined holds the sanctioned ways out of confinement
// (docs/security.md, "Ways out"): a plugin in each language, confined
// under "require" to the minimal set (no network, no path beyond its
// package, data and temporary directories), cannot read the host's docs
// itself, yet reads them through host.fs.read and fetches from the host's
// allowlisted server through host.net.fetch; outside the roots and the
// allowlist it is refused; and every call it made is an audit event
// naming it, the capability, the path or URL and the outcome.
func TestWaysOutConfined(t *testing.T) {
	if v, err := ll.LandlockGetABIVersion(); err != nil || v < 6 {
		t.Skip("this kernel's Landlock cannot enforce the minimal set under require")
	}
	proctest.RealPython(t)
	base := t.TempDir()
	docs, secret := filepath.Join(base, "docs"), filepath.Join(base, "secret")
	writeFiles(t, map[string]string{filepath.Join(docs, "guide.md"): "# guide", filepath.Join(secret, "key"): "k3y"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "served %s", r.URL.Path)
	}))
	defer srv.Close()

	requires := []string{"host.fs.read ^1.0", "host.net.fetch ^1.0"}
	home := writePolyglotHome(t, polyglot(goLang, "go-a", nil, requires...), polyglot(pythonLang, "py", nil, requires...),
		polyglot(nodeLang, "js", nil, requires...))
	cfg := testConfig(home)
	read, err := hostcap.NewFSRead(hostcap.FSReadConfig{Roots: []string{docs}})
	if err != nil {
		t.Fatal(err)
	}
	fetch, err := hostcap.NewNetFetch(hostcap.NetFetchConfig{Allow: []string{srv.URL + "/v1/"}})
	if err != nil {
		t.Fatal(err)
	}
	v1 := semver.MustParse("1.0.0")
	cfg.Capabilities = append(cfg.Capabilities, capability.Provided{Key: hostcap.FSRead, Version: v1}, capability.Provided{Key: hostcap.NetFetch, Version: v1})
	cfg.Handlers = map[capability.Key]capability.Handler{hostcap.FSRead: read, hostcap.NetFetch: fetch}
	cfg.Confinement.Default = pluginpkg.ConfineRequire
	var mu sync.Mutex
	var audits []string
	k := startKernel(t, cfg)
	defer k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventAudit {
			mu.Lock()
			defer mu.Unlock()
			audits = append(audits, fmt.Sprintf("%s %s.%s %s %s", e.Plugin, e.Capability, e.Method, e.Target, e.State))
		}
	})()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for _, plugin := range []string{"go-a", "py", "js"} {
		t.Run(plugin, func(t *testing.T) {
			out, err := k.CallProvider(ctx, "plugin/"+plugin+"/run", json.RawMessage(`{"read":"`+docs+`/guide.md"}`))
			t.Logf("direct read: %s", out)
			if err != nil || !strings.Contains(string(out), `"read_error"`) || !strings.Contains(strings.ToLower(string(out)), "permission denied") {
				t.Errorf("a direct read of the docs = %s, %v; want a denial", out, err)
			}
			tests := []struct{ name, script, want string }{
				{"read a doc", polyCall("host.fs.read", "read", `{"path":"`+docs+`/guide.md"}`),
					`{"content":"# guide","encoding":"utf-8","size":7}`},
				{"read outside the roots", polyCall("host.fs.read", "read", `{"path":"`+secret+`/key"}`),
					`-32000: host.fs.read: denied: ` + secret + `/key is not beneath a root the host serves (` + docs + `)`},
				{"fetch", polyCall("host.net.fetch", "get", `{"url":"`+srv.URL+`/v1/notes"}`),
					`"content":"served /v1/notes"`},
				{"fetch outside the allowlist", polyCall("host.net.fetch", "get", `{"url":"`+srv.URL+`/admin"}`),
					`-32000: host.net.fetch: denied: ` + srv.URL + `/admin: not in the host's allowlist (allowed: ` + srv.URL + `/v1/)`},
			}
			for _, tt := range tests {
				o := runPoly(t, ctx, k, plugin, tt.script)
				got := o.String()
				if o.Error != nil {
					got = fmt.Sprintf("%d: %s", o.Error.Code, o.Error.Message)
				} else {
					got = compactJSON(t, got)
				}
				if !strings.Contains(got, tt.want) {
					t.Errorf("%s: %s\nwant %s", tt.name, got, tt.want)
				}
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for _, p := range []string{"go-a", "py", "js"} {
		want = append(want,
			p+" host.fs.read.read "+docs+"/guide.md allowed",
			p+" host.fs.read.read "+secret+"/key denied",
			p+" host.net.fetch.get "+srv.URL+"/v1/notes allowed",
			p+" host.net.fetch.get "+srv.URL+"/admin denied")
	}
	if !slices.Equal(audits, want) {
		t.Errorf("audits:\n%s\nwant:\n%s", strings.Join(audits, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range runningClients(k) {
		if r := c.Confinement(); r == nil || r.Mode != pluginpkg.ConfineRequire || len(r.Effective.Connect) != 0 {
			t.Errorf("%s: confinement %+v, want require with no network", c.Name(), r)
		}
	}
}

// writeFiles writes each file, creating its directory.
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
