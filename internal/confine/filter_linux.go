//go:build linux

package confine

import (
	"slices"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls are refused to every confined plugin (EPERM): what lets a
// process read or change another (ptrace), leave or reshape its sandbox
// (namespaces, mounts, file handles that bypass paths), reach the kernel's
// larger attack surfaces (io_uring, which also bypasses seccomp, BPF, perf,
// userfaultfd, keyrings) or the machine (modules, kexec, reboot, swap),
// and listen(2): no permission grants listening, and Landlock refuses
// only the bind(2) before it, not a listen on a socket never bound, which
// the kernel binds to an ephemeral port itself. filter adds memfd_create
// without MFD_NOEXEC_SEAL.
var deniedSyscalls = []string{
	"listen",
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
	"open_by_handle_at", "name_to_handle_at",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
	"swapon", "swapoff", "acct", "quotactl", "iopl", "ioperm",
}

// namespaceFlags are the clone(2) flags that create namespaces.
var namespaceFlags = []uint64{unix.CLONE_NEWUSER, unix.CLONE_NEWNS, unix.CLONE_NEWNET, unix.CLONE_NEWPID,
	unix.CLONE_NEWIPC, unix.CLONE_NEWUTS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWTIME}

// actionENOSYS answers "not implemented": for clone3, whose flags seccomp
// cannot see (they are in memory), so that the C library falls back to
// clone, whose flags it can.
const actionENOSYS = seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))

// filter returns the seccomp filter of p: everything allowed but
// deniedSyscalls, clone with a namespace flag, clone3, and sockets p does
// not need. Without network, no socket(2) at all (socketpair(2) stays:
// it reaches nothing). With it, only IPv4 and IPv6 TCP (and UDP when p
// allows it; never raw, SCTP or Multipath TCP) and netlink's route family
// (which the C library's resolver reads interfaces from); UNIX sockets
// never (Landlock before ABI 9 cannot restrict their paths).
func filter(p *Policy) seccomp.Filter {
	deny := seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: deniedSyscalls}
	if len(p.TCPConnect) == 0 && !p.UDP {
		deny.Names = append(slices.Clone(deniedSyscalls), "socket")
	}
	for _, f := range namespaceFlags {
		deny.NamesWithCondtions = append(deny.NamesWithCondtions, seccomp.NameWithConditions{Name: "clone",
			Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.BitsSet, Value: f}}})
	}
	// A memfd that may be executed: exec'd through /proc/self/fd, it runs
	// any program the plugin can read (a copy of one under /usr/lib, say)
	// beyond what exec grants, since Landlock does not see a file in no
	// directory. One sealed against execution (MFD_NOEXEC_SEAL, Linux
	// 6.3) stays allowed.
	deny.NamesWithCondtions = append(deny.NamesWithCondtions, seccomp.NameWithConditions{Name: "memfd_create",
		Conditions: []seccomp.Condition{{Argument: 1, Operation: seccomp.BitsNotSet, Value: unix.MFD_NOEXEC_SEAL}}})
	deny.NamesWithCondtions = append(deny.NamesWithCondtions, socketDenials(p)...)
	groups := []seccomp.SyscallGroup{deny, {Action: actionENOSYS, Names: []string{"clone3"}}}
	return seccomp.Filter{ // the calling thread's alone (no TSYNC): see Start
		NoNewPrivs: true,
		Policy:     seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups},
	}
}

// socketDenials returns the socket(2) calls p's plugin may not make, each a
// set of conditions that all hold.
func socketDenials(p *Policy) []seccomp.NameWithConditions {
	sock := func(cs ...seccomp.Condition) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: "socket", Conditions: cs}
	}
	arg := func(n uint32, op seccomp.Operation, v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: n, Operation: op, Value: v}
	}
	if len(p.TCPConnect) == 0 && !p.UDP {
		return nil // filter denies socket(2) by name
	}
	out := []seccomp.NameWithConditions{
		// A family other than IPv4, IPv6 and netlink.
		sock(arg(0, seccomp.NotEqual, unix.AF_INET), arg(0, seccomp.NotEqual, unix.AF_INET6), arg(0, seccomp.NotEqual, unix.AF_NETLINK)),
		// Netlink other than its route family.
		sock(arg(0, seccomp.Equal, unix.AF_NETLINK), arg(2, seccomp.NotEqual, unix.NETLINK_ROUTE)),
	}
	for _, fam := range []uint64{unix.AF_INET, unix.AF_INET6} {
		// A protocol other than the default, TCP and UDP (Multipath TCP,
		// SCTP, ...).
		out = append(out, sock(arg(0, seccomp.Equal, fam), arg(2, seccomp.NotEqual, 0),
			arg(2, seccomp.NotEqual, unix.IPPROTO_TCP), arg(2, seccomp.NotEqual, unix.IPPROTO_UDP)))
		// A type other than a stream (1) or, with UDP, a datagram (2): the
		// type's low four bits, past the SOCK_NONBLOCK and SOCK_CLOEXEC flags.
		if p.UDP {
			out = append(out, sock(arg(0, seccomp.Equal, fam), arg(1, seccomp.BitsSet, 0xc)),
				sock(arg(0, seccomp.Equal, fam), arg(1, seccomp.BitsSet, 1), arg(1, seccomp.BitsSet, 2)))
		} else {
			out = append(out, sock(arg(0, seccomp.Equal, fam), arg(1, seccomp.BitsSet, 0xe)))
		}
	}
	return out
}
