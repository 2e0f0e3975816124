package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/internal/process"
	"github.com/extkernel/extkernel/internal/procstat"
)

// children lists the children of ppid from /proc/<pid>/stat; ok is false
// when /proc cannot be read.
func children(ppid int) (pids []int, ok bool) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, false
	}
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		parent, err := procstat.ReadPPID(pid)
		if err != nil {
			continue
		}
		if parent == ppid && !isReaper(name) {
			pids = append(pids, pid)
		}
	}
	return pids, true
}

// isReaper reports whether process pid runs as a host's reaper.
func isReaper(pid string) bool {
	cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
	if err != nil {
		return false
	}
	arg0, _, _ := strings.Cut(string(cmdline), "\x00")
	return arg0 == process.ReaperName
}
