package kernel

import (
	"golang.org/x/sys/unix"

	"github.com/extkernel/extkernel/internal/procstat"
)

// leftOrphans returns the detached helpers (pids of `sleep` processes that
// lead their own session) still alive: each gets up to 5s to end, waited for
// through a pidfd, and one still alive then is killed, so that nothing
// outlives the test.
func leftOrphans(pids []int) []int {
	var left []int
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone (ESRCH)
		}
		if isHelper(pid) && !exits(fd, 5000) {
			left = append(left, pid)
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
		unix.Close(fd)
	}
	return left
}

// isHelper reports whether pid is a detached helper TestChaos's plugins
// start, not an unrelated process that reused its pid.
func isHelper(pid int) bool {
	st, err := procstat.Read(pid)
	return err == nil && st.Comm == "sleep" && st.Session == pid
}

// exits waits up to ms milliseconds for the process of pidfd fd to exit.
func exits(fd, ms int) bool {
	for {
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, ms)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}
