package sdktest

import (
	"fmt"
	"os"
	"sort"
	"strconv"

	"github.com/extkernel/extkernel/internal/procstat"
)

// groupMembers describes the live processes of process group pgid, zombies
// left out (an exited child waiting to be reaped runs nothing), read from
// /proc; ok is false when /proc cannot be read.
func groupMembers(pgid int) (members []string, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	var pids []int
	comm := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := procstat.Read(pid)
		if err != nil || st.PGRP != pgid || st.State == "Z" {
			continue
		}
		pids = append(pids, pid)
		comm[pid] = st.Comm
	}
	sort.Ints(pids)
	for _, pid := range pids {
		members = append(members, fmt.Sprintf("pid %d (%s)", pid, comm[pid]))
	}
	return members, true
}
