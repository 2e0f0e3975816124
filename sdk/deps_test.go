package sdk

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies holds the SDK to the standard library, protocol and
// the module's internal wire mechanics: a plugin built on it links
// nothing else (go-hclog's package initialisation alone cost a plugin's
// cold start about half a millisecond).
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{"github.com/extkernel/extkernel/sdk": true, "github.com/extkernel/extkernel/protocol": true,
		"github.com/extkernel/extkernel/internal/wire": true, "github.com/extkernel/extkernel/internal/jsonscan": true}
	for _, pkg := range strings.Fields(string(out)) {
		if !allowed[pkg] {
			t.Errorf("the SDK depends on %s", pkg)
		}
	}
}
