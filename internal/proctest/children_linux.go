package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/sidecar"
)

// children lists the children of ppid from /proc/<pid>/stat; ok is false
// when /proc cannot be read.
func children(ppid int) (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	want := strconv.Itoa(ppid)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name may hold spaces; fields resume after the last ')'.
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == want && !isReaper(e.Name()) {
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
	return arg0 == sidecar.ReaperName
}
