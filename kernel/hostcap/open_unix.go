//go:build unix

package hostcap

import (
	"os"
	"syscall"
)

// openFlags opens a file to read without blocking: a FIFO or a device
// planted under a root must not hold the handler in open(2).
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
