package procstat

import (
	"os"
	"runtime"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Stat
		wantErr bool
	}{
		{"plain", "123 (sleep) S 45 67 89 0 -1 4194304 1 0 0 0 7 3 0 0 20 0 1 0",
			Stat{Comm: "sleep", State: "S", PPID: 45, PGRP: 67, Session: 89, UTime: 7, STime: 3}, false},
		{"spaces and parentheses in the name", "9 (a) b (c)) Z 1 9 9 0 -1 0 0 0 0 0 0 0 0 0",
			Stat{Comm: "a) b (c)", State: "Z", PPID: 1, PGRP: 9, Session: 9}, false},
		{"no name", "123 S 45", Stat{}, true},
		{"too few fields", "1 (x) S 2 3", Stat{}, true},
		{"not a number", "1 (x) S two 3 4 0 -1 0 0 0 0 0 0 0 0 0", Stat{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("Parse = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestReadSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/stat is Linux's")
	}
	st, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getppid() || st.State == "" {
		t.Errorf("Read(self) = %+v, want parent %d", st, os.Getppid())
	}
}

func TestReadPPIDSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/stat is Linux's")
	}
	if got, err := ReadPPID(os.Getpid()); err != nil || got != os.Getppid() {
		t.Errorf("ReadPPID(self) = %d, %v; want %d", got, err, os.Getppid())
	}
	if _, err := ReadPPID(-1); err == nil {
		t.Error("ReadPPID(-1) did not fail")
	}
}
