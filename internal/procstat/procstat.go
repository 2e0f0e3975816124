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

// ReadPPID returns the parent of process pid, from its /proc/<pid>/stat
// read into a buffer on the stack: a leak check reads it for every
// process on the machine, where os.ReadFile would allocate each file.
func ReadPPID(pid int) (int, error) {
	var buf [1024]byte // a stat line is ~300 bytes; its first fields fit whatever the command name
	n, err := readInto("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if err != nil {
		return 0, err
	}
	st, err := Parse(string(buf[:n]))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st.PPID, nil
}

// Parse parses the content of a /proc/<pid>/stat file. The command name
// may hold spaces and parentheses: the fields resume after the last ')'.
func Parse(s string) (Stat, error) {
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return Stat{}, fmt.Errorf("no parenthesized command name in %.40q", s)
	}
	// f[0] is field 3 of proc(5) (state); utime and stime are fields 14
	// and 15: the first 13 after the name are all Parse reads.
	var f [13]string
	if n := firstFields(s[end+1:], f[:]); n < len(f) {
		return Stat{}, fmt.Errorf("%d fields after the command name, want at least 13", n)
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

// firstFields fills f with the first len(f) whitespace-separated fields
// of s (strings.Fields without its slice) and returns how many it found.
func firstFields(s string, f []string) int {
	n := 0
	for n < len(f) {
		s = strings.TrimLeft(s, " \t\n")
		if s == "" {
			break
		}
		i := strings.IndexAny(s, " \t\n")
		if i < 0 {
			i = len(s)
		}
		f[n], s = s[:i], s[i:]
		n++
	}
	return n
}
