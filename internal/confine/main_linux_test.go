//go:build linux

package confine

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/extkernel/extkernel/pluginpkg"
)

// envProbe makes the test binary a probe: it tries the action the
// variable names and prints "ok" or the error.
const envProbe = "CONFINE_TEST_PROBE"

func TestMain(m *testing.M) {
	if action, ok := os.LookupEnv(envProbe); ok {
		fmt.Print(probe(action))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probe tries action ("read PATH", "write PATH", "exec PATH", "connect
// ADDR", "udp ADDR", "unix PATH", "listen ADDR", "listen-unbound", "raw",
// ...) and returns "ok" or the error's text.
func probe(action string) string {
	verb, arg, _ := strings.Cut(action, " ")
	var err error
	switch verb {
	case "read":
		_, err = os.ReadFile(arg)
	case "write":
		err = os.WriteFile(arg, []byte("x"), 0o600)
	case "truncate":
		err = os.Truncate(arg, 0)
	case "exec":
		err = exec.Command(arg).Run()
	case "connect":
		var c net.Conn
		if c, err = net.Dial("tcp", arg); err == nil {
			c.Close()
		}
	case "udp":
		var c net.Conn
		if c, err = net.Dial("udp", arg); err == nil {
			_, err = c.Write([]byte("x"))
			c.Close()
		}
	case "unix":
		var c net.Conn
		if c, err = net.Dial("unix", arg); err == nil {
			c.Close()
		}
	case "listen":
		var l net.Listener
		if l, err = net.Listen("tcp", arg); err == nil {
			l.Close()
		}
	case "listen-unbound":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0); err == nil {
			err = syscall.Listen(fd, 1)
			syscall.Close(fd)
		}
	case "mptcp":
		_, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 262)
	case "raw":
		_, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP)
	case "kill":
		var pid int
		fmt.Sscan(arg, &pid)
		err = syscall.Kill(pid, 0)
	case "ptrace":
		var pid int
		fmt.Sscan(arg, &pid)
		err = syscall.PtraceAttach(pid)
	case "memfd-exec", "memfd-sealed":
		err = memfd(verb == "memfd-sealed")
	case "unshare":
		err = syscall.Unshare(syscall.CLONE_NEWUSER)
	case "caps":
		err = noCapabilities()
	case "exec-caps": // the plugin's own command again, as root would regain capabilities
		var out []byte
		cmd := exec.Command("/proc/self/exe")
		cmd.Env = []string{envProbe + "=caps"}
		if out, err = cmd.Output(); err == nil && string(out) != "ok" {
			err = errors.New(string(out))
		}
	default:
		return "unknown action " + action
	}
	if err != nil {
		return err.Error()
	}
	return "ok"
}

// noCapabilities returns an error naming the capabilities the process
// holds or could regain at execve: none of its sets may hold one, and a
// process running as root must have the securebits noroot locked or an
// empty bounding set. (It asks the kernel with capget and prctl: a
// confined plugin cannot read /proc/self.)
func noCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	var held []string
	for i, d := range data {
		if d.Effective|d.Permitted|d.Inheritable != 0 {
			held = append(held, fmt.Sprintf("capabilities word %d: effective %#x, permitted %#x, inheritable %#x", i, d.Effective, d.Permitted, d.Inheritable))
		}
	}
	bounding := 0
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if on, _ := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); on == 1 {
			held = append(held, fmt.Sprintf("ambient capability %d", c))
		}
		if on, _ := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); on == 1 {
			bounding++
		}
	}
	if os.Geteuid() == 0 && bounding > 0 {
		bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
		if err != nil || bits&confinedSecurebits != confinedSecurebits {
			held = append(held, fmt.Sprintf("root with %d bounding capabilities and securebits %#x (%v)", bounding, bits, err))
		}
	}
	if len(held) > 0 {
		return errors.New(strings.Join(held, "; "))
	}
	return nil
}

// memfd copies the test binary into a memfd and runs it as a probe of
// "read /proc/self/exe" (nil when it ran): the way to run a program no
// path grants. sealed creates the memfd sealed against execution
// (MFD_NOEXEC_SEAL) and stops there.
func memfd(sealed bool) error {
	if sealed {
		fd, err := unix.MemfdCreate("probe", unix.MFD_NOEXEC_SEAL)
		if err != nil {
			return os.NewSyscallError("memfd_create", err)
		}
		return unix.Close(fd)
	}
	b, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return err
	}
	fd, err := unix.MemfdCreate("probe", 0)
	if err != nil {
		return os.NewSyscallError("memfd_create", err)
	}
	f := os.NewFile(uintptr(fd), "memfd")
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return err
	}
	cmd := exec.Command(fmt.Sprintf("/proc/self/fd/%d", fd))
	cmd.Env = []string{envProbe + "=read /proc/self/exe"}
	return cmd.Run()
}

// runConfined runs the test binary as a probe of action, forked confined
// to spec's policy (Start), and returns what it printed.
func runConfined(t *testing.T, spec Spec, action string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec.Command = self
	if spec.Mode == "" {
		spec.Mode = pluginpkg.ConfineBestEffort
	}
	p, _, err := Plan(spec)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	cmd := exec.Command(self)
	cmd.Args = []string{"probe"}
	cmd.Env = []string{envProbe + "=" + action}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Start(p, cmd.Start); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe %q: %v\n%s", action, err, out.String())
	}
	return out.String()
}

// TestStartConfines runs real probes confined by Start: what the policy
// grants works, what it does not is denied by the kernel.
func TestStartConfines(t *testing.T) {
	if landlockABI() < abiScopes {
		t.Skipf("Landlock ABI %d: this test needs %d (the escape suite reports what older kernels miss)", landlockABI(), abiScopes)
	}
	root := t.TempDir()
	dirs := map[string]string{}
	for _, d := range []string{"pkg", "data", "tmp", "secret", "other"} {
		dirs[d] = filepath.Join(root, d)
		if err := os.Mkdir(dirs[d], 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"pkg/code", "secret/key", "data/kept"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("content"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	addr := acceptor(t)
	vars := Vars{Package: dirs["pkg"], Data: dirs["data"], Tmp: dirs["tmp"]}
	minimal := Spec{Vars: vars}
	_, port, _ := net.SplitHostPort(addr)
	withNet := Spec{Vars: vars, Requested: &pluginpkg.Permissions{Read: []string{"${package}"}, Connect: []string{"127.0.0.1:" + port}}}
	tests := []struct {
		name   string
		spec   Spec
		action string
		denied bool
	}{
		{"read its package", minimal, "read " + dirs["pkg"] + "/code", false},
		{"read a secret", minimal, "read " + dirs["secret"] + "/key", true},
		{"write its data", minimal, "write " + dirs["data"] + "/new", false},
		{"write its package", minimal, "write " + dirs["pkg"] + "/new", true},
		{"truncate its package", minimal, "truncate " + dirs["pkg"] + "/code", true},
		{"write elsewhere", minimal, "write " + dirs["other"] + "/x", true},
		{"exec a shell", minimal, "exec /bin/sh", true},
		{"exec a memfd", minimal, "memfd-exec", true},
		{"a memfd sealed against exec", minimal, "memfd-sealed", false},
		{"connect without net", minimal, "connect " + addr, true},
		{"udp without net", minimal, "udp 127.0.0.1:53", true},
		{"connect granted", withNet, "connect " + addr, false},
		{"connect another port", withNet, "connect 127.0.0.1:1", true},
		{"listen", withNet, "listen 127.0.0.1:0", true},
		{"listen on an unbound socket", withNet, "listen-unbound", true},
		{"multipath tcp", withNet, "mptcp", true},
		{"raw socket", withNet, "raw", true},
		{"udp with a tcp grant", withNet, "udp 127.0.0.1:53", true},
		{"unix socket", withNet, "unix " + filepath.Join(root, "sock"), true},
		{"signal the host", minimal, fmt.Sprintf("kill %d", os.Getpid()), true},
		{"ptrace the host", minimal, fmt.Sprintf("ptrace %d", os.Getpid()), true},
		{"read the host's command line", minimal, fmt.Sprintf("read /proc/%d/cmdline", os.Getpid()), true},
		{"read the host's status", minimal, fmt.Sprintf("read /proc/%d/status", os.Getpid()), true},
		{"user namespace", minimal, "unshare", true},
		{"no capabilities", minimal, "caps", false},
		{"no capabilities after an exec", minimal, "exec-caps", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runConfined(t, tt.spec, tt.action)
			if denied := got != "ok"; denied != tt.denied {
				t.Errorf("%s: %q, want denied=%v", tt.action, got, tt.denied)
			}
			t.Logf("%s: %s", tt.action, got)
		})
	}
	if _, err := os.Stat(filepath.Join(dirs["pkg"], "new")); err == nil {
		t.Error("the package directory was written")
	}
}

// TestStartLeavesHostAlone: after confined starts, every thread of the
// host, new ones included, still reads what the plugin may not and opens
// sockets: the restricted thread was discarded, not returned to the
// scheduler or cloned.
func TestStartLeavesHostAlone(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if got := runConfined(t, Spec{Vars: Vars{Package: t.TempDir()}}, "read "+secret); got == "ok" {
			t.Fatal("the probe read the secret")
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // spread over threads, new ones among them
			defer runtime.UnlockOSThread()
			if _, err := os.ReadFile(secret); err != nil {
				errs <- err
				return
			}
			fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
			if err != nil {
				errs <- err
				return
			}
			syscall.Close(fd)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a host thread is restricted: %v", err)
	}
}

// TestStartOlderABI plans and starts policies with TCP ports under
// Landlock ABIs before TCP rules (simulated: Start applies the ABI
// planned): "require" refuses, naming the ABI TCP rules need; "best-effort"
// reports it, and the plugin starts, reaches any port as its report says,
// and is still confined to its files.
func TestStartOlderABI(t *testing.T) {
	if landlockABI() < abiTCP {
		t.Skipf("Landlock ABI %d: the simulated ABIs are below it", landlockABI())
	}
	root := t.TempDir()
	secret := filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("content"), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "pkg")
	if err := os.Mkdir(pkg, 0o700); err != nil {
		t.Fatal(err)
	}
	addr := acceptor(t)
	spec := Spec{Vars: Vars{Package: pkg}, Requested: &pluginpkg.Permissions{Connect: []string{"*:1"}}}
	for abi := 1; abi < abiTCP; abi++ {
		t.Run(fmt.Sprintf("abi-%d", abi), func(t *testing.T) {
			defer SimulateLandlockABI(abi)()
			req := spec
			req.Mode, req.Command = pluginpkg.ConfineRequire, "/bin/true"
			_, _, err := Plan(req)
			var ue *UnenforceableError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), fmt.Sprintf("Landlock ABI %d needed", abiTCP)) {
				t.Errorf("require: %v, want an *UnenforceableError naming Landlock ABI %d", err, abiTCP)
			}
			req.Mode = pluginpkg.ConfineBestEffort
			_, r, err := Plan(req)
			if err != nil {
				t.Fatalf("best-effort: %v", err)
			}
			if !strings.Contains(strings.Join(r.NotEnforced, "\n"), "TCP connections restricted") {
				t.Errorf("best-effort: not enforced %q; want the TCP rule reported", r.NotEnforced)
			}
			if got := runConfined(t, spec, "connect "+addr); got != "ok" {
				t.Errorf("connect to another port: %q, want ok (not enforced before ABI %d, as reported)", got, abiTCP)
			}
			if got := runConfined(t, spec, "read "+secret); got == "ok" {
				t.Errorf("read a secret: ok, want denied")
			}
		})
	}
}

// TestFilterPrograms: each shape's cached program is what go-seccomp-bpf
// assembles for it, the three shapes differ, and a policy's shape is its
// network rules alone.
func TestFilterPrograms(t *testing.T) {
	shapes := []netShape{{}, {net: true}, {net: true, udp: true}}
	seen := map[string]netShape{}
	for _, n := range shapes {
		got, err := program(n)
		if err != nil {
			t.Fatal(err)
		}
		f := filter(n)
		insts, err := f.Policy.Assemble()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := bpf.Assemble(insts)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != len(got) {
			t.Fatalf("%+v: cached program of %d instructions, assembled %d", n, len(got), len(raw))
		}
		for i, r := range raw {
			if g := got[i]; g.Code != r.Op || g.Jt != r.Jt || g.Jf != r.Jf || g.K != r.K {
				t.Fatalf("%+v: instruction %d differs: %+v, assembled %+v", n, i, g, r)
			}
		}
		key := fmt.Sprint(got)
		if other, ok := seen[key]; ok {
			t.Errorf("shapes %+v and %+v have the same program", n, other)
		}
		seen[key] = n
	}
	for _, c := range []struct {
		p    Policy
		want netShape
	}{
		{Policy{Read: []string{"/x"}}, netShape{}},
		{Policy{TCPConnect: []uint16{443}}, netShape{net: true}},
		{Policy{TCPConnect: []uint16{80, 443}, Write: []string{"/y"}}, netShape{net: true}},
		{Policy{UDP: true, UDPPorts: []uint16{53}}, netShape{net: true, udp: true}},
	} {
		if got := shapeOf(&c.p); got != c.want {
			t.Errorf("shapeOf(%+v) = %+v, want %+v", c.p, got, c.want)
		}
	}
}

// acceptor listens on a TCP port of 127.0.0.1, accepting and closing
// every connection until the test ends, and returns its address.
func acceptor(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().String()
}
