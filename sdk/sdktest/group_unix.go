//go:build unix && !linux

package sdktest

import (
	"fmt"
	"syscall"
)

// groupMembers reports whether process group pgid still has a process, by
// signal 0 to the group: there is no /proc to name them, and an exited
// child not yet reaped counts too. ok is always true.
func groupMembers(pgid int) (members []string, ok bool) {
	if err := syscall.Kill(-pgid, 0); err == nil || err == syscall.EPERM {
		return []string{fmt.Sprintf("at least one process of group %d", pgid)}, true
	}
	return nil, true
}
