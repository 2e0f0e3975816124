//go:build linux && !extkernel_portable

package process

import (
	"os"
	"syscall"
)

// pipe returns a pipe whose end hostEnd (0, the read end, or 1) is the
// host's: non-blocking and polled by the runtime, as os.Pipe makes both
// ends. The child's end stays blocking and is never registered with the
// poller (os.Pipe would register it, exec switch it back to blocking and
// closing it unregister it: four system calls saved per pipe). It also
// returns the pipe's inode, by which processes that still hold the pipe
// when the plugin is gone are found (killPipeHolders).
func pipe(hostEnd int) (r, w *os.File, inode uint64, err error) {
	var fd [2]int
	if err := syscall.Pipe2(fd[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, 0, os.NewSyscallError("pipe2", err)
	}
	if err := syscall.SetNonblock(fd[hostEnd], true); err != nil {
		syscall.Close(fd[0])
		syscall.Close(fd[1])
		return nil, nil, 0, os.NewSyscallError("setnonblock", err)
	}
	inode = pipeInode(fd[0])
	// NewFile polls a non-blocking descriptor.
	return os.NewFile(uintptr(fd[0]), "|0"), os.NewFile(uintptr(fd[1]), "|1"), inode, nil
}
