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
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil {
			continue
		}
		if st.PPID == ppid && !isReaper(e.Name()) {
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
