//go:build linux && !extkernel_portable

package process

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/extkernel/extkernel/internal/procstat"
)

// pipeInode returns the inode of the pipe fd is an end of, or 0. Both ends
// of a pipe share it, and /proc/<pid>/fd/<n> of any process holding either
// end reads "pipe:[inode]".
func pipeInode(fd int) uint64 {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0
	}
	return st.Ino
}

// killPipeHolders SIGKILLs every process other than the host that holds a
// descriptor on one of the pipes whose inodes are given (0 entries are
// ignored), found through /proc/*/fd, waits (within bound) for each to exit and
// reaps those that are the host's children (orphans re-parented to a child
// subreaper). It returns their pids. A process of another user, or one
// that closed or redirected the pipes, is not found.
//
// It holds syscall.ForkLock while it looks and signals: a child the host
// is forking holds copies of the host's descriptors until it execs, and
// the lock (which os/exec holds across clone(CLONE_VFORK) until the exec)
// keeps such a child from being mistaken for a holder.
func killPipeHolders(inodes []uint64, bound time.Duration) []int {
	targets := make(map[string]bool, len(inodes))
	for _, ino := range inodes {
		if ino != 0 {
			targets["pipe:["+strconv.FormatUint(ino, 10)+"]"] = true
		}
	}
	if len(targets) == 0 {
		return nil
	}
	killed := signalPipeHolders(targets)
	pids := make([]int, len(killed))
	for i, k := range killed {
		k.reap(bound)
		pids[i] = k.pid
	}
	return pids
}

// signalPipeHolders SIGKILLs the holders of targets, under
// syscall.ForkLock.
func signalPipeHolders(targets map[string]bool) []holder {
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	names, err := readDirNames("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var killed []holder
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || !holdsPipe(pid, targets) {
			continue
		}
		if h, ok := killHolder(pid, targets); ok {
			killed = append(killed, h)
		}
	}
	return killed
}

// holdsPipe reports whether process pid has a descriptor whose link is one
// of targets.
func holdsPipe(pid int, targets map[string]bool) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	names, err := readDirNames(dir)
	if err != nil {
		return false
	}
	for _, n := range names {
		if link, err := os.Readlink(dir + n); err == nil && targets[link] {
			return true
		}
	}
	return false
}

// holder is a process killPipeHolders signalled.
type holder struct {
	pid   int
	pidfd int // -1 without pidfds
}

// killHolder SIGKILLs pid if it still holds one of targets. The signal
// goes through a pidfd opened before this second look, so a pid reused in
// between is never signalled; without pidfds (Linux before 5.3) it goes
// through kill(2).
func killHolder(pid int, targets map[string]bool) (holder, bool) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, syscall.ENOSYS) {
		if !holdsPipe(pid, targets) || syscall.Kill(pid, syscall.SIGKILL) != nil {
			return holder{}, false
		}
		return holder{pid: pid, pidfd: -1}, true
	}
	if err != nil {
		return holder{}, false // gone, or not ours to see
	}
	if !holdsPipe(pid, targets) || unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0) != nil {
		unix.Close(pidfd)
		return holder{}, false
	}
	return holder{pid: pid, pidfd: pidfd}, true
}

// reap waits, within bound, for the killed holder to exit, so that
// its descriptors are closed, and reaps it if it is the host's child.
// Without a pidfd it waits only for a child.
func (h holder) reap(bound time.Duration) {
	child := parentOf(h.pid) == os.Getpid()
	flags := 0
	if h.pidfd >= 0 {
		_, _ = unix.Poll([]unix.PollFd{{Fd: int32(h.pidfd), Events: unix.POLLIN}}, int(bound.Milliseconds()))
		unix.Close(h.pidfd)
		flags = syscall.WNOHANG
	}
	if child {
		var ws syscall.WaitStatus
		for {
			_, err := syscall.Wait4(h.pid, &ws, flags, nil)
			if !errors.Is(err, syscall.EINTR) {
				return
			}
		}
	}
}

// parentOf returns the parent pid of pid, or 0.
func parentOf(pid int) int {
	st, err := procstat.Read(pid)
	if err != nil {
		return 0
	}
	return st.PPID
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
