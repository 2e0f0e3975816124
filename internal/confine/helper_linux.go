//go:build linux

package confine

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// envPolicy names the environment variable that makes the host's
// executable the helper step, holding the encoded Policy.
const envPolicy = "EXTKERNEL_CONFINE_POLICY"

// helperExit is the helper's exit status when it cannot confine or exec:
// the shell's "found but cannot execute".
const helperExit = 126

// init turns the process into the helper step when the host started it so:
// it runs before main in any binary importing this package and never
// returns.
func init() {
	if s, ok := os.LookupEnv(envPolicy); ok {
		runHelper(s)
	}
}

// runHelper confines the process to the encoded policy s and execs the
// plugin from the same thread (capabilities are per thread), with the
// environment it was given less envPolicy.
func runHelper(s string) {
	runtime.LockOSThread()
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "%s%v\n", HelperPrefix, err)
		syscall.Exit(helperExit)
	}
	p, err := decodePolicy(s)
	if err != nil {
		fail(err)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPolicy+"=") {
			env = append(env, kv)
		}
	}
	if strings.HasPrefix(p.Path, "/proc/self/fd/") {
		unix.CloseOnExec(pinnedFD) // the binary is open by the time the kernel closes it
	}
	if err := apply(p); err != nil {
		fail(err)
	}
	err = syscall.Exec(p.Path, p.Args, env)
	fail(fmt.Errorf("exec %s: %w", p.Args[0], err))
}

// pinnedFD is the descriptor a pinned executable is passed to the helper
// as (the first of exec.Cmd.ExtraFiles).
const pinnedFD = 3

// Helper returns how to start the plugin confined to p, which runs path
// with args: the executable to start (the host's own), and the variable
// to add to the plugin's environment. A path of the form /proc/self/fd/N
// (a pinned executable) must be passed to the helper as its descriptor 3,
// and the executable given is then /proc/self/fd/3.
func Helper(p *Policy, path string, args []string) (exe, envVar string, err error) {
	q := *p
	q.Path, q.Args = path, args
	if strings.HasPrefix(path, "/proc/self/fd/") {
		q.Path = fmt.Sprintf("/proc/self/fd/%d", pinnedFD)
		q.Exec = append(slices.Clone(q.Exec), q.Path)
	}
	enc, err := q.encode()
	if err != nil {
		return "", "", err
	}
	return "/proc/self/exe", envPolicy + "=" + enc, nil
}
