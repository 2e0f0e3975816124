package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReconfigureRefusesBrokenConfig: a config file that no longer parses
// is not applied; the running generation keeps serving and the message
// says why.
func TestReconfigureRefusesBrokenConfig(t *testing.T) {
	buildDemo(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "kernel.json")
	data, err := os.ReadFile(demoConfig)
	if err != nil {
		t.Fatal(err)
	}
	home, _ := filepath.Abs(demoHome)
	data = bytes.Replace(data, []byte(`"home": "home"`), []byte(`"home": "`+home+`"`), 1)
	if err := os.WriteFile(config, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	g := &globals{configPath: config, stdout: &stdout, stderr: &stderr}
	k, cfg, _, err := newKernel(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer k.Close(ctx)
	n := k.Current().Number()
	if err := os.WriteFile(config, []byte(`{"format": 1, "home": "home", "pool": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p := newPrinter(&out, defaultPrinterOptions())
	reconfigure(ctx, g, k, cfg.Logger, p, func() { t.Error("a refused config recorded a generation") })
	p.close()
	if want := fmt.Sprintf("config not applied; generation %d keeps serving under the previous config:", n); !strings.Contains(out.String(), want) ||
		!strings.Contains(out.String(), "pool: unknown key") {
		t.Errorf("printed %q, want %q and the problem", out.String(), want)
	}
	if k.Current().Number() != n {
		t.Errorf("generation %d, want %d", k.Current().Number(), n)
	}
}
