// Package confine confines a plugin process to what its permissions say,
// with the operating system's own mechanisms, for package sidecar: Plan
// turns a package's permissions (the manifest's, the host's grants and
// denies, deny wins) into a Policy of absolute paths, ports and rules and
// a Report of what this machine enforces of it; the helper step applies
// the Policy to itself and then execs the plugin.
//
// # Invariants
//
//   - Nothing is granted that Plan did not list in the Policy: on Linux the
//     Landlock ruleset handles every file-system right and, where the ABI
//     has them, TCP ports and the signal and abstract-socket scopes; the
//     seccomp filter refuses what Landlock cannot say (sockets other than
//     TCP over IPv4 and IPv6, Multipath TCP, UDP without a rule, raw and
//     packet sockets, UNIX sockets, listen(2), ptrace, namespaces,
//     io_uring, keyrings, BPF, kernel modules); no_new_privs stops setuid binaries; a helper
//     running as root drops every capability first.
//   - Under "require", Plan fails with an *UnenforceableError naming
//     every rule the machine cannot enforce; nothing starts. Under
//     "best-effort" the Report says exactly what is not enforced.
//   - The helper step is the host's own executable (/proc/self/exe), as
//     the reaper is: init detects it by the environment variable envPolicy,
//     which it removes before the exec. It never returns: it execs the
//     plugin or exits with status 126 after writing why to stderr.
//   - A Policy is a value: Plan builds it, the helper decodes it; nothing
//     in it changes after Plan returns.
//
// # Platforms
//
// Linux enforces with Landlock (github.com/landlock-lsm/go-landlock),
// seccomp (github.com/elastic/go-seccomp-bpf) and no_new_privs. Every other
// system enforces nothing: Plan says so, and ModeRequire refuses.
package confine
