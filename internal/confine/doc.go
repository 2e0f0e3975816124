// Package confine confines a plugin process to what its permissions say,
// with the operating system's own mechanisms, for package sidecar: Plan
// turns a package's permissions (the manifest's, the host's grants and
// denies, deny wins) into a Policy of absolute paths, ports and rules and
// a Report of what this machine enforces of it; Start forks and execs the
// plugin from an OS thread confined to the Policy.
//
// # Invariants
//
//   - Nothing is granted that Plan did not list in the Policy: on Linux the
//     Landlock ruleset handles every file-system right and, where the ABI
//     has them, TCP ports and the signal and abstract-socket scopes; the
//     seccomp filter refuses what Landlock cannot say (sockets other than
//     TCP over IPv4 and IPv6, Multipath TCP, UDP without a rule, raw and
//     packet sockets, UNIX sockets, listen(2), a memfd that can be
//     executed, ptrace, namespaces, io_uring, keyrings, BPF, kernel
//     modules); no_new_privs stops setuid binaries; a host running as
//     root drops every capability for the plugin.
//   - Under "require", Plan fails with an *UnenforceableError naming every
//     rule the machine cannot enforce; nothing starts. Under "best-effort"
//     the Report says exactly what is not enforced.
//   - Go cannot run code between fork and exec, so Start confines one OS
//     thread, locked to its goroutine, and forks the plugin from it: the
//     child inherits the thread's Landlock domain, seccomp filter,
//     no_new_privs and capabilities. That thread is never unlocked, so the
//     runtime discards it when the goroutine ends; no other thread of the
//     host is ever restricted.
//   - A Policy is a value: Plan builds it; nothing in it changes after.
//
// # Platforms
//
// Linux enforces with Landlock (github.com/landlock-lsm/go-landlock),
// seccomp (github.com/elastic/go-seccomp-bpf) and no_new_privs, from a
// confined thread (Start). macOS enforces with a Seatbelt profile
// (seatbeltProfile) that sandbox-exec applies before it executes the
// plugin (Command). OpenBSD enforces with unveil and pledge from
// golang.org/x/sys/unix, applied by a helper step: the host's own binary,
// re-executed under a marker argv (Command), confines itself in this
// package's init and executes the plugin. Every other system enforces
// nothing: Plan says so, and "require" refuses. Only Linux is exercised
// by this repository's tests on a real kernel; the macOS profile and the
// OpenBSD rules are tested as generated text and rule lists.
package confine
