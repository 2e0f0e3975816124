//go:build linux || darwin || openbsd

package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// systemEntries stats systemRead and systemDeviceFiles once per host
// process (they are the same for every plugin): the ones that exist, each
// true for a directory. A system path that appears later is not granted
// until the host restarts; one that disappears is skipped when the rules
// are built.
var systemEntries = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range append(slices.Clone(systemRead), systemDeviceFiles...) {
		if fi, err := os.Stat(p); err == nil {
			m[p] = fi.IsDir()
		}
	}
	return m
})

// systemReadable returns the entries of systemRead that exist here.
func systemReadable() []string { return existing(systemRead) }

// systemDevices returns the entries of systemDeviceFiles that exist here.
func systemDevices() []string { return existing(systemDeviceFiles) }

// existing returns the paths of systemEntries among paths.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, ok := systemEntries()[p]; ok {
			out = append(out, p)
		}
	}
	return out
}

// interpreterHome returns the installation an executable in a "bin"
// directory belongs to (pyenv's ~/.pyenv/versions/3.11.7 for its
// python3.11), which its runtime reads its standard library from; "" for
// one under one of systemPrefixes, whose libraries systemRead covers, for
// a top-level directory (such as /opt), or for one in no "bin" directory.
func interpreterHome(exe string) string {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "bin" {
		return ""
	}
	home := filepath.Dir(dir)
	if slices.Contains(systemPrefixes, home) || strings.Count(home, "/") < 2 {
		return ""
	}
	return home
}
