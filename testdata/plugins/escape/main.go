//go:build linux

// Command escape is a hostile extkernel plugin on the Go SDK, written the
// way a plugin author trying to leave its confinement would write it. The
// escape suite (sidecar/escape_linux_test.go) starts it confined and calls
// one provider per attempt; each provider does the real thing (reads a
// key, dials a port, signals a process) and answers what happened: "ok",
// followed by what it got, when the attempt worked, or the error's text
// when it did not. The test asserts the denial and that nothing outside
// changed.
//
// Every provider takes an Attempt (JSON) naming its target. The providers:
//
//   - steal-ssh-key: reads ~/.ssh/id_ed25519 (then id_rsa, id_ecdsa) of
//     the HOME it was given;
//   - read, write, truncate: os.ReadFile, os.WriteFile, os.Truncate of path;
//   - rename, link: os.Rename, os.Link of path to to;
//   - symlink: creates to, a symbolic link to path, and reads through it;
//   - dial-tcp, dial-udp, dial-unix: connects to addr ("@name" is an
//     abstract UNIX socket) and writes "escaped";
//   - listen-tcp: net.Listen on addr; listen-autobind: listen(2) on a TCP
//     socket never bound, which makes the kernel pick a port;
//   - mptcp: a Multipath TCP socket (IPPROTO_MPTCP) connected to addr;
//   - lookup-host: net.LookupHost of path; dns-query: a DNS query for path
//     sent over UDP to addr;
//   - kill: sends signal to pid; ptrace: PTRACE_ATTACH to pid;
//   - exec: runs path with args and answers its output; exec-copy: copies
//     this executable to path and runs the copy; exec-memfd: copies it into
//     a memfd and runs that through /proc/self/fd;
//   - outlive: starts itself as a detached child (a session of its own,
//     stdio on /dev/null) that waits for the plugin to exit, then makes
//     the attempts in then and writes what happened, as JSON, to path.
//
// Run as "escape ids" it prints its effective user and capabilities (what
// a setuid binary would change); run as "escape linger ATTEMPT" it is the
// child of outlive.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/extkernel/extkernel/sdk"
)

// Attempt is a provider's input: what it is aimed at.
type Attempt struct {
	Do     string    `json:"do,omitempty"`     // the provider to run (outlive's attempts)
	Path   string    `json:"path,omitempty"`   // a file, program or host name
	To     string    `json:"to,omitempty"`     // where path is renamed or linked to
	Addr   string    `json:"addr,omitempty"`   // a network address or UNIX socket path
	PID    int       `json:"pid,omitempty"`    // a process to signal or trace
	Signal int       `json:"signal,omitempty"` // the signal kill sends (0 only checks)
	Args   []string  `json:"args,omitempty"`   // exec's arguments
	Then   []Attempt `json:"then,omitempty"`   // outlive's attempts, made by the child
}

// attempts are the providers, by name: each returns what it got, or the
// error that stopped it.
var attempts = map[string]func(a Attempt) (string, error){
	"steal-ssh-key":   stealSSHKey,
	"read":            func(a Attempt) (string, error) { b, err := os.ReadFile(a.Path); return string(b), err },
	"write":           func(a Attempt) (string, error) { return "", os.WriteFile(a.Path, []byte("escaped"), 0o644) },
	"truncate":        func(a Attempt) (string, error) { return "", os.Truncate(a.Path, 0) },
	"rename":          func(a Attempt) (string, error) { return "", os.Rename(a.Path, a.To) },
	"link":            func(a Attempt) (string, error) { return "", os.Link(a.Path, a.To) },
	"symlink":         readThroughSymlink,
	"dial-tcp":        func(a Attempt) (string, error) { return dial("tcp", a.Addr) },
	"dial-udp":        func(a Attempt) (string, error) { return dial("udp", a.Addr) },
	"dial-unix":       func(a Attempt) (string, error) { return dial("unix", a.Addr) },
	"listen-tcp":      listenTCP,
	"listen-autobind": listenAutobind,
	"mptcp":           multipathTCP,
	"lookup-host":     lookupHost,
	"dns-query":       dnsQuery,
	"kill":            func(a Attempt) (string, error) { return "", syscall.Kill(a.PID, syscall.Signal(a.Signal)) },
	"ptrace":          ptraceAttach,
	"exec":            run,
	"exec-copy":       execCopy,
	"exec-memfd":      execMemfd,
	"outlive":         outlive,
}

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "ids":
			fmt.Print(ids())
			return
		case "linger":
			linger(os.Args[2])
			return
		}
	}
	p := sdk.New(os.Getenv("EXTKERNEL_PLUGIN_NAME"), os.Getenv("EXTKERNEL_PLUGIN_VERSION"))
	for name, fn := range attempts {
		p.Provider(name, "attempts to escape: "+name, func(_ context.Context, in json.RawMessage) (any, error) {
			var a Attempt
			if err := json.Unmarshal(in, &a); err != nil {
				return nil, err
			}
			return outcome(fn(a)), nil
		})
	}
	p.Serve()
}

// outcome is what an attempt answers: "ok" and what it got, or the error.
func outcome(got string, err error) string {
	if err != nil {
		return err.Error()
	}
	if got != "" {
		return "ok: " + got
	}
	return "ok"
}

// stealSSHKey reads the first private key it finds in ~/.ssh, as a stealer
// would; it answers the first key's error when none can be read.
func stealSSHKey(Attempt) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	var first error
	for _, name := range []string{"id_ed25519", "id_rsa", "id_ecdsa"} {
		b, err := os.ReadFile(filepath.Join(home, ".ssh", name))
		if err == nil {
			return string(b), nil
		}
		first = cmpErr(first, err)
	}
	return "", first
}

// cmpErr keeps the first error.
func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// readThroughSymlink makes a.To a link to a.Path (replacing one left by
// an earlier try) and reads through it.
func readThroughSymlink(a Attempt) (string, error) {
	_ = os.Remove(a.To)
	if err := os.Symlink(a.Path, a.To); err != nil {
		return "", fmt.Errorf("make the link: %w", err)
	}
	b, err := os.ReadFile(a.To)
	return string(b), err
}

// dial connects to addr and writes "escaped" (for UDP, one datagram).
func dial(network, addr string) (string, error) {
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write([]byte("escaped")); err != nil {
		return "", fmt.Errorf("connected, then: %w", err)
	}
	return "connected to " + c.RemoteAddr().String(), nil
}

// listenTCP listens on a.Addr (127.0.0.1:0 by default) and says where.
func listenTCP(a Attempt) (string, error) {
	addr := a.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	defer l.Close()
	return "listening on " + l.Addr().String(), nil
}

// listenAutobind calls listen(2) on a TCP socket it never bound: the
// kernel binds it to an ephemeral port itself.
func listenAutobind(Attempt) (string, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", os.NewSyscallError("socket", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Listen(fd, 1); err != nil {
		return "", os.NewSyscallError("listen", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return "", os.NewSyscallError("getsockname", err)
	}
	return fmt.Sprintf("listening on port %d", sa.(*syscall.SockaddrInet4).Port), nil
}

// ipprotoMPTCP is IPPROTO_MPTCP, which package syscall does not name.
const ipprotoMPTCP = 262

// multipathTCP opens a Multipath TCP socket and connects it to a.Addr.
func multipathTCP(a Attempt) (string, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, ipprotoMPTCP)
	if err != nil {
		return "", os.NewSyscallError("socket", err)
	}
	defer syscall.Close(fd)
	ap, err := net.ResolveTCPAddr("tcp4", a.Addr)
	if err != nil {
		return "", err
	}
	sa := &syscall.SockaddrInet4{Port: ap.Port}
	copy(sa.Addr[:], ap.IP.To4())
	if err := syscall.Connect(fd, sa); err != nil {
		return "", os.NewSyscallError("connect", err)
	}
	return "connected with Multipath TCP to " + a.Addr, nil
}

// lookupHost resolves a.Path with the system's resolver.
func lookupHost(a Attempt) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, a.Path)
	return strings.Join(addrs, ", "), err
}

// dnsQuery sends a DNS query for a.Path (an A record) over UDP to a.Addr,
// as a plugin exfiltrating data in names would, and reads the answer.
func dnsQuery(a Attempt) (string, error) {
	q := binary.BigEndian.AppendUint16(nil, 0x2a2a) // id
	q = binary.BigEndian.AppendUint16(q, 0x0100)    // recursion desired
	q = binary.BigEndian.AppendUint16(q, 1)         // one question
	q = append(q, 0, 0, 0, 0, 0, 0)                 // no answers, authorities, additionals
	for _, label := range strings.Split(a.Path, ".") {
		q = append(append(q, byte(len(label))), label...)
	}
	q = append(q, 0, 0, 1, 0, 1) // end of name, type A, class IN
	c, err := net.DialTimeout("udp", a.Addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write(q); err != nil {
		return "", fmt.Errorf("send the query: %w", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	n, err := c.Read(make([]byte, 512))
	if err != nil {
		return "sent the query, no answer", nil
	}
	return fmt.Sprintf("sent the query, %d bytes answered", n), nil
}

// ptraceAttach attaches to a.PID, then detaches.
func ptraceAttach(a Attempt) (string, error) {
	if err := syscall.PtraceAttach(a.PID); err != nil {
		return "", os.NewSyscallError("ptrace", err)
	}
	var ws syscall.WaitStatus
	_, _ = syscall.Wait4(a.PID, &ws, syscall.WALL, nil)
	_ = syscall.PtraceDetach(a.PID)
	return fmt.Sprintf("attached to %d", a.PID), nil
}

// run executes a.Path with a.Args and answers its output.
func run(a Attempt) (string, error) {
	out, err := exec.Command(a.Path, a.Args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w (output %q)", err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// execCopy copies this executable to a.Path (mode 0755) and runs the
// copy as "escape ids": a program of the plugin's own making, outside
// what exec grants.
func execCopy(a Attempt) (string, error) {
	b, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(a.Path, b, 0o755); err != nil {
		return "", err
	}
	return run(Attempt{Path: a.Path, Args: []string{"ids"}})
}

// execMemfd copies this executable into a memfd (a file in no directory)
// and runs it through /proc/self/fd as "escape ids".
func execMemfd(Attempt) (string, error) {
	b, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		return "", err
	}
	fd, err := unix.MemfdCreate("escape", 0)
	if err != nil {
		return "", os.NewSyscallError("memfd_create", err)
	}
	f := os.NewFile(uintptr(fd), "memfd")
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		return "", err
	}
	return run(Attempt{Path: fmt.Sprintf("/proc/self/fd/%d", fd), Args: []string{"ids"}})
}

// ids says the process's effective user and capabilities, the latter
// from capget(2) (a child of the plugin may not read its own /proc entry).
func ids() string {
	hdr := struct {
		version uint32
		pid     int32
	}{version: 0x20080522} // _LINUX_CAPABILITY_VERSION_3
	var data [2]struct{ effective, permitted, inheritable uint32 }
	caps := "?"
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno == 0 {
		caps = fmt.Sprintf("%08x%08x", data[1].effective, data[0].effective)
	}
	return fmt.Sprintf("euid=%d caps=%s", os.Geteuid(), caps)
}

// keepOpen holds the write end of the pipe outlive's child waits on: the
// child reads EOF once this process is gone.
var keepOpen []*os.File

// outlive starts this executable again as a child in a session of its own,
// with its stdio on /dev/null (so nothing ties it to the plugin's pipes),
// that waits for the plugin to exit and then makes a.Then's attempts.
func outlive(a Attempt) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", err
	}
	a.PID = os.Getpid() // the parent the child outlives
	enc, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	cmd := exec.Command(os.Args[0], "linger", string(enc))
	cmd.ExtraFiles = []*os.File{r}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	r.Close()
	keepOpen = append(keepOpen, w)
	go cmd.Wait() // the plugin exits first: whoever adopts the child reaps it
	return fmt.Sprintf("child %d", cmd.Process.Pid), nil
}

// linger is outlive's child: it waits for the plugin's end of the pipe
// (descriptor 3) to close, makes the attempts and writes what happened
// to the report path (its pid, its parent's and each attempt's outcome in
// order), by a rename within the same directory.
func linger(arg string) {
	var a Attempt
	if err := json.Unmarshal([]byte(arg), &a); err != nil {
		os.Exit(2)
	}
	pipe := os.NewFile(3, "plugin")
	_, _ = pipe.Read(make([]byte, 1)) // EOF: the plugin is exiting
	// Its descriptors close before its children are handed to a new
	// parent: wait for that, so that what follows runs after its end.
	for start := time.Now(); os.Getppid() == a.PID && time.Since(start) < 5*time.Second; {
		time.Sleep(5 * time.Millisecond)
	}
	report := map[string]any{"pid": os.Getpid(), "ppid": os.Getppid()}
	var results []string
	for _, t := range a.Then {
		fn, ok := attempts[t.Do]
		if !ok {
			results = append(results, "unknown attempt "+t.Do)
			continue
		}
		results = append(results, outcome(fn(t)))
	}
	report["results"] = results
	b, _ := json.Marshal(report)
	tmp := a.Path + ".part"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Exit(3)
	}
	if err := os.Rename(tmp, a.Path); err != nil {
		os.Exit(4)
	}
}
