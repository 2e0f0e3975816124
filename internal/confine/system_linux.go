//go:build linux

package confine

// systemRead lists what every process may need to read to run on Linux:
// shared libraries, data under /usr/share and /usr/lib (locale, time
// zones, CA certificates), the few files under /etc a C library or
// runtime reads (the loader's cache, name resolution, users and groups,
// time zone, TLS roots), and machine information under /proc and /sys.
// Not /proc/self: a Landlock rule is bound to the file its path resolves
// to when the rule is made, in the host, where /proc/self is the host's
// own directory: granting it let a plugin read the host's command line
// and status (and never its own /proc/self). Program directories (/bin, /sbin,
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
	"/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/filesystems",
	"/proc/sys/kernel/osrelease", "/proc/sys/kernel/random", "/proc/sys/vm/overcommit_memory",
	"/sys/devices/system/cpu", "/sys/fs/cgroup", "/sys/kernel/mm/transparent_hugepage",
}

// systemDeviceFiles are the device files every process may read and write.
var systemDeviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// systemPrefixes are installation prefixes whose libraries systemRead
// already covers.
var systemPrefixes = []string{"/", "/usr", "/usr/local"}
