//go:build openbsd

package confine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// On OpenBSD a plugin is confined by a helper step: the host's own
// binary, started with helperName as its argv[0] and helperFlag as its
// first argument, unveils the policy's files, pledges the plugin's
// promises as its execpromises, and executes the plugin, which starts
// with both in force. init runs the helper before the host's main, in
// any binary that imports this package, as the reaper does on Linux.
const (
	helperName = "extkernel-confine"
	helperFlag = "--extkernel-confine-v1"
)

func init() {
	if len(os.Args) >= 4 && os.Args[0] == helperName && os.Args[1] == helperFlag {
		err := runHelper(os.Args[2], os.Args[3], os.Args[4:])
		fmt.Fprintf(os.Stderr, "extkernel: confine: %v\n", err)
		os.Exit(127)
	}
}

// runHelper confines this process to the policy (JSON) and executes path
// with args; it returns only on failure.
func runHelper(policy, path string, args []string) error {
	var p Policy
	if err := json.Unmarshal([]byte(policy), &p); err != nil {
		return fmt.Errorf("decode the policy: %w", err)
	}
	for _, r := range unveilRules(&p) {
		if err := unix.Unveil(r.path, r.perms); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("unveil %s %q: %w", r.path, r.perms, err)
		}
	}
	if err := unix.UnveilBlock(); err != nil {
		return fmt.Errorf("unveil: %w", err)
	}
	if err := unix.Pledge("stdio rpath exec", pledgePromises(&p)); err != nil {
		return fmt.Errorf("pledge: %w", err)
	}
	return fmt.Errorf("exec %s: %w", path, syscall.Exec(path, append([]string{path}, args...), os.Environ()))
}

// systemRead lists what every process may need to read to run on
// OpenBSD: shared libraries and the loader's hints, data under /usr/share,
// the files under /etc a C library or runtime reads. docs/security.md
// lists the same.
var systemRead = []string{
	"/usr/lib", "/usr/libexec/ld.so", "/usr/local/lib", "/usr/share", "/var/run/ld.so.hints",
	"/etc/hosts", "/etc/resolv.conf", "/etc/services", "/etc/protocols", "/etc/passwd", "/etc/group",
	"/etc/pwd.db", "/etc/ssl", "/etc/localtime", "/etc/malloc.conf",
}

// systemDeviceFiles are the device files every process may read and write.
var systemDeviceFiles = []string{"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"}

func systemReadable() []string { return existing(systemRead) }
func systemDevices() []string  { return existing(systemDeviceFiles) }

// existing returns the paths that exist.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// interpreterHome returns the installation an executable in a "bin"
// directory belongs to; "" for one under /, /usr or /usr/local, whose
// libraries systemRead covers.
func interpreterHome(exe string) string {
	dir := filepath.Dir(exe)
	if filepath.Base(dir) != "bin" {
		return ""
	}
	home := filepath.Dir(dir)
	if home == "/" || home == "/usr" || home == "/usr/local" || strings.Count(home, "/") < 2 {
		return ""
	}
	return home
}

// enforce records what unveil and pledge enforce of p: files by
// hierarchy; the network all or nothing (pledge "inet" allows any address
// and port, and listening); other programs and signals to other processes
// only when p lets the plugin start programs.
func enforce(p *Policy, r *Report) {
	p.Children = r.Effective != nil && len(r.Effective.Exec) > 0
	r.Mechanism = "unveil, pledge"
	r.Enforced = append(r.Enforced,
		fmt.Sprintf("files: read %d, write %d, execute %d hierarchies or files, nothing else (unveil)",
			len(p.Read)+len(p.Devices), len(p.Write)+len(p.Devices), len(p.Exec)),
		"system calls limited to the promises "+pledgePromises(p)+" (pledge)")
	if len(p.TCPConnect) == 0 && !p.UDP {
		r.Enforced = append(r.Enforced, "no network (pledge)")
	} else {
		r.NotEnforced = append(r.NotEnforced, fmt.Sprintf("TCP connections restricted to ports %s: pledge \"inet\" allows any address and port, and listening", ports(p.TCPConnect)))
	}
	r.NotEnforced = append(r.NotEnforced, r.hostOnly...)
	if p.Children {
		r.NotEnforced = append(r.NotEnforced, "signals to other processes of the host's user (pledge \"proc\", which starting programs needs)")
		r.NotEnforced = append(r.NotEnforced, setIDFiles(p.Exec)...)
	} else {
		r.Enforced = append(r.Enforced, "no other program started, no signal to another process (pledge)")
	}
}

// Start runs start, which executes the helper step (Command).
func Start(_ *Policy, start func() error) error { return start() }

// Command returns the command line that runs path with args confined to
// p: the host's own binary as the helper step, which confines itself and
// executes the plugin.
func Command(p *Policy, path string, args []string) (string, []string) {
	self, err := os.Executable()
	if err != nil {
		self = os.Args[0] // the exec fails, and says so
	}
	policy, _ := json.Marshal(p) // a Policy always encodes
	return self, append([]string{helperName, helperFlag, string(policy), path}, args[min(1, len(args)):]...)
}
