package procstat

import (
	"bytes"
	"fmt"
	"strconv"
)

// RSS reads the resident set size of process pid, in bytes, from the
// VmRSS line of /proc/<pid>/status. Elsewhere it fails, as that file does
// not exist.
func RSS(pid int) (int64, error) {
	var buf [8192]byte // a status file is ~1.5 KB
	n, err := readInto("/proc/"+strconv.Itoa(pid)+"/status", buf[:])
	if err != nil {
		return 0, err
	}
	rest := buf[:n]
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/%d/status: VmRSS: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS line", pid)
}
