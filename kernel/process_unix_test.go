//go:build unix

package kernel

import "syscall"

// alive reports whether process pid exists (a zombie included).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
