//go:build linux

package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// systemRead lists what every process may need to read to run on Linux:
// shared libraries, data under /usr/share and /usr/lib (locale, time
// zones, CA certificates), the few files under /etc a C library or
// runtime reads (the loader's cache, name resolution, users and groups,
// time zone, TLS roots), and the process's own entries and machine
// information under /proc and /sys. Program directories (/bin, /sbin,
// /usr/bin, /usr/sbin, /usr/libexec) are left out: a program a plugin may
// not execute, it may not read either, so the dynamic loader cannot be
// made to run it. Docs list the same (docs/security.md, "Confinement").
var systemRead = []string{
	"/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32",
	"/usr/local/lib", "/usr/share",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/ld.so.preload",
	"/etc/localtime", "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf", "/etc/default/locale",
	"/etc/nsswitch.conf", "/etc/host.conf", "/etc/hosts", "/etc/resolv.conf", "/etc/gai.conf",
	"/etc/services", "/etc/protocols", "/etc/passwd", "/etc/group",
	"/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/mime.types",
	"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/filesystems",
	"/proc/sys/kernel/osrelease", "/proc/sys/kernel/random", "/proc/sys/vm/overcommit_memory",
	"/sys/devices/system/cpu", "/sys/fs/cgroup", "/sys/kernel/mm/transparent_hugepage",
}

// systemDeviceFiles are the device files every process may read and write.
var systemDeviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

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

// systemPrefixes are installation prefixes whose libraries systemRead
// already covers.
var systemPrefixes = []string{"/", "/usr", "/usr/local"}

// interpreterHome returns the installation an executable in a "bin"
// directory belongs to (pyenv's ~/.pyenv/versions/3.11.7 for its
// python3.11), which its runtime reads its standard library from; "" for
// one under a system prefix, whose libraries systemRead covers, or one in
// no "bin" directory.
func interpreterHome(exe string) string {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "bin" {
		return ""
	}
	home := filepath.Dir(dir)
	for _, p := range systemPrefixes {
		if home == p {
			return ""
		}
	}
	if strings.Count(home, "/") < 2 { // never a top-level directory such as /opt
		return ""
	}
	return home
}
