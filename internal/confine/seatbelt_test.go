package confine

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestSeatbeltProfile: the macOS profile of a policy, against its golden
// file; paths resolved (as /tmp is /private/tmp on macOS) and quoted.
func TestSeatbeltProfile(t *testing.T) {
	p := &Policy{
		Read:       []string{"/Users/u/.extkernel/packages/a", "/usr/lib", `/weird "quoted\ dir`},
		Write:      []string{"/Users/u/.extkernel/data/a", "/tmp/extkernel-tmp-a-1"},
		Exec:       []string{"/Users/u/.extkernel/packages/a/plugin", "/usr/bin/git"},
		Devices:    []string{"/dev/null", "/dev/urandom"},
		TCPConnect: []uint16{443, 8443},
		UDP:        true, UDPPorts: []uint16{53},
	}
	resolve := func(s string) string {
		if r, ok := strings.CutPrefix(s, "/tmp/"); ok {
			return "/private/tmp/" + r
		}
		return s
	}
	golden(t, "seatbelt.sb", seatbeltProfile(p, resolve))

	none := seatbeltProfile(&Policy{Read: []string{"/p"}, Exec: []string{"/p/run"}}, func(s string) string { return s })
	for _, forbidden := range []string{"network", "system-socket", "file-write"} {
		if strings.Contains(none, forbidden) {
			t.Errorf("a policy without network or write access has %q in its profile:\n%s", forbidden, none)
		}
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n%s", name, got)
	}
}
