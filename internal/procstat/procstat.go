// Package procstat reads a process's /proc/<pid>/stat (Linux's proc(5)
// format) and the VmRSS line of its /proc/<pid>/status: one parser for the
// process helpers, the leak checks of the tests and the benchmark
// reports. Elsewhere Read and RSS fail, as those files do not exist.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stat is the part of /proc/<pid>/stat the module reads.
type Stat struct {
	// Comm is the command name, without its parentheses.
	Comm string
	// State is the one-letter state: R, S, D, Z, T, ...
	State string
	// PPID, PGRP and Session are the parent, the process group and the
	// session.
	PPID, PGRP, Session int
	// UTime and STime are the user and system CPU time used, in clock
	// ticks (1/USER_HZ).
	UTime, STime int64
}

// Read reads and parses /proc/<pid>/stat.
func Read(pid int) (Stat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	st, err := Parse(string(data))
	if err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}

// Parse parses the content of a /proc/<pid>/stat file. The command name
// may hold spaces and parentheses: the fields resume after the last ')'.
func Parse(s string) (Stat, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("no parenthesized command name in %.40q", s)
	}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 of proc(5) (state); utime and stime are fields 14
	// and 15.
	if len(f) < 13 {
		return Stat{}, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	st := Stat{Comm: s[open+1 : end], State: f[0]}
	var err error
	for _, p := range []struct {
		field string
		into  *int
	}{{f[1], &st.PPID}, {f[2], &st.PGRP}, {f[3], &st.Session}} {
		if *p.into, err = strconv.Atoi(p.field); err != nil {
			return Stat{}, err
		}
	}
	if st.UTime, err = strconv.ParseInt(f[11], 10, 64); err != nil {
		return Stat{}, err
	}
	if st.STime, err = strconv.ParseInt(f[12], 10, 64); err != nil {
		return Stat{}, err
	}
	return st, nil
}
