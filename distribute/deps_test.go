package distribute

import (
	"os/exec"
	"strings"
	"testing"
)

// TestKernelDoesNotDependOnDistribute holds issue 27's item 6: a host that
// embeds the kernel and does not distribute packages carries none of the
// distribution modules (go list -deps of the kernel, its config and
// pluginpkg names no package of oras-go, go-containerregistry, sigstore,
// the OCI specs or this package).
func TestKernelDoesNotDependOnDistribute(t *testing.T) {
	pkgs := []string{"github.com/extkernel/extkernel/kernel", "github.com/extkernel/extkernel/kernel/config",
		"github.com/extkernel/extkernel/pluginpkg"}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %v", deps)
	}
	for _, dep := range deps {
		for _, bad := range []string{"oras.land/", "github.com/google/go-containerregistry", "github.com/sigstore/",
			"github.com/opencontainers/", "github.com/extkernel/extkernel/distribute"} {
			if strings.HasPrefix(dep, bad) {
				t.Errorf("the kernel depends on %s", dep)
			}
		}
	}
}
