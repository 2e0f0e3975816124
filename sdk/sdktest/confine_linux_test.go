package sdktest

import (
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/pluginpkg"
)

// TestWellBehavedConfined runs the suite on every well-behaved plugin of
// the repository confined under "require" to its permissions (the minimal
// set, which the SDK examples declare and the others get by declaring
// none): each passes as it does unconfined, the report says how it ran,
// and nothing was denied.
func TestWellBehavedConfined(t *testing.T) {
	if v, err := ll.LandlockGetABIVersion(); err != nil || v < 6 {
		t.Skip("this kernel's Landlock cannot enforce the minimal set under require")
	}
	for _, p := range wellBehaved() {
		t.Run(p.name, func(t *testing.T) {
			if p.interpreter == "python3" {
				proctest.RealPython(t) // not a version manager's shim, which runs what confinement denies
			} else if p.interpreter != "" {
				needInterpreter(t, p.interpreter)
			}
			dir := pkgDir(t, p.name, p.src, p.files, p.links)
			rep := Check(t, dir, Options{Confinement: pluginpkg.Confinement{Mode: pluginpkg.ConfineRequire}})
			if !strings.HasPrefix(rep.Confinement, "require: landlock ABI ") || len(rep.Denials) > 0 {
				t.Errorf("confinement %q, denials %q", rep.Confinement, rep.Denials)
			}
		})
	}
	noChildren(t)
}
