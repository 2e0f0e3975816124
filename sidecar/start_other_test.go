//go:build !unix

package sidecar

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestStartUnsupported checks that where plugin processes cannot run
// (Windows), Start fails before anything runs, in phaseSpawn, with an error
// wrapping errors.ErrUnsupported that names the system.
func TestStartUnsupported(t *testing.T) {
	m, err := pluginpkg.Parse("plugin.json", []byte(plugintest.GoodManifest("p", false)))
	if err != nil {
		t.Fatal(err)
	}
	pkg := &pluginpkg.Package{Name: "p", Dir: t.TempDir(), Manifest: m, Enabled: true}
	c, err := Start(context.Background(), pkg, Options{})
	var se *StartError
	if c != nil || !errors.As(err, &se) || se.Phase != phaseSpawn || !errors.Is(err, errors.ErrUnsupported) ||
		!strings.Contains(err.Error(), "not supported on") {
		t.Fatalf("Start = %v, %v; want a phaseSpawn StartError wrapping errors.ErrUnsupported", c, err)
	}
}
