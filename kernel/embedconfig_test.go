package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sidecar"
)

// TestConfigSessionAndDataRoot starts a plugin that returns the initialize
// params it received: the session context and the data root come from the
// Config, the data directory is absolute and exists.
func TestConfigSessionAndDataRoot(t *testing.T) {
	session := map[string]string{"workspace": "/src/demo", "user": "ada"}
	tests := []struct {
		name        string
		session     map[string]string
		dataRoot    func(t *testing.T, home string) string // the Config value
		wantDataDir func(home, root string) string
	}{
		{"defaults", nil, func(*testing.T, string) string { return "" },
			func(home, _ string) string { return filepath.Join(home, "data", "p") }},
		{"absolute data root and session", session, func(t *testing.T, _ string) string { return filepath.Join(t.TempDir(), "state") },
			func(_, root string) string { return filepath.Join(root, "p") }},
		{"relative data root", session, func(t *testing.T, home string) string {
			t.Chdir(home)
			return "plugin-data"
		}, func(home, _ string) string { return filepath.Join(home, "plugin-data", "p") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := writeHome(t, plug{name: "p", env: map[string]string{"SCRIPT_INIT": "init"}})
			cfg := testConfig(home)
			cfg.Session = tt.session
			cfg.DataRoot = tt.dataRoot(t, home)
			k := startKernel(t, cfg)
			out, err := k.CallProvider(context.Background(), "plugin/p/init", nil)
			if err != nil {
				t.Fatal(err)
			}
			var got protocol.InitializeParams
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Session, tt.session) {
				t.Errorf("session = %v, want %v", got.Session, tt.session)
			}
			want := tt.wantDataDir(home, cfg.DataRoot)
			if got.Plugin.DataDir != want {
				t.Errorf("data_dir = %q, want %q", got.Plugin.DataDir, want)
			}
			if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
				t.Errorf("data directory %s: %v", want, err)
			}
		})
	}
}

// TestConfigHandshakeTimeout starts a plugin that never answers initialize
// and whose manifest sets no handshake timeout: the Config's timeout bounds
// the handshake and the error names it.
func TestConfigHandshakeTimeout(t *testing.T) {
	home := writeHome(t, plug{name: "mute", required: true, env: map[string]string{"SCRIPT_START": "hang"}})
	dropHandshakeTimeout(t, home, "mute")
	cfg := testConfig(home)
	cfg.HandshakeTimeout = 200 * time.Millisecond
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := k.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		noChildren(t)
	}()
	// The startup budget (30s) is far above the configured timeout: the
	// failure can only come from the latter.
	err = k.Start(context.Background())
	var se *sidecar.StartError
	if !errors.As(err, &se) {
		t.Fatalf("Start: %v, want a *sidecar.StartError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "200ms") || !strings.Contains(msg, "the host's handshake timeout") {
		t.Errorf("Start: %v; want it to name the host's handshake timeout of 200ms", err)
	}
}

// dropHandshakeTimeout removes runtime.handshake_timeout from a package's
// manifest, so that the host's default applies.
func dropHandshakeTimeout(t *testing.T, home, name string) {
	t.Helper()
	path := filepath.Join(home, "packages", name, "plugin.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["runtime"].(map[string]any), "handshake_timeout")
	writeJSON(t, path, m)
}

// TestNewEmbedderSettings checks New's validation and defaults of the
// embedder settings.
func TestNewEmbedderSettings(t *testing.T) {
	tests := []struct {
		name    string
		cfg     config.Config
		wantErr string
		check   func(t *testing.T, c config.Config)
	}{
		{name: "defaults", cfg: config.Config{Home: "/h"}, check: func(t *testing.T, c config.Config) {
			if c.HandshakeTimeout != wire.DefaultHandshakeTimeout || c.DataRoot != "/h/data" || c.ValidateProviderInput {
				t.Errorf("defaults: handshake %v, data root %q, validate %v", c.HandshakeTimeout, c.DataRoot, c.ValidateProviderInput)
			}
		}},
		{name: "relative data root", cfg: config.Config{Home: "/h", DataRoot: "d"}, check: func(t *testing.T, c config.Config) {
			if !filepath.IsAbs(c.DataRoot) || filepath.Base(c.DataRoot) != "d" {
				t.Errorf("data root = %q, want absolute", c.DataRoot)
			}
		}},
		{name: "handshake timeout too long", cfg: config.Config{Home: "/h", HandshakeTimeout: 2 * time.Minute},
			wantErr: `kernel: config: handshake_timeout: "2m" exceeds the maximum of 1m0s`},
		{name: "negative handshake timeout", cfg: config.Config{Home: "/h", HandshakeTimeout: -time.Second},
			wantErr: `kernel: config: handshake_timeout: "-1s" is not a positive duration such as "5s"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := New(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("New: %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, *k.config())
		})
	}
}
