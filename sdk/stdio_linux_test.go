package sdk

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPollStdio runs pollStdio in a child process (this test binary again,
// in TestPollStdioChild) with stdin and stdout on pipes: both become
// non-blocking and usable; with stdout shared with stderr, or stdin not a
// pipe, nothing changes.
func TestPollStdio(t *testing.T) {
	tests := []struct {
		name       string
		shared     bool // stdout and stderr on one pipe
		noStdin    bool // stdin is /dev/null
		wantPolled bool
	}{
		{name: "pipes", wantPolled: true},
		{name: "stdout shared with stderr", shared: true},
		{name: "stdin not a pipe", noStdin: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", "^TestPollStdioChild$")
			cmd.Env = append(os.Environ(), "SDK_POLLSTDIO_CHILD=1", "GORACE=atexit_sleep_ms=0")
			var stdin io.WriteCloser
			if !tt.noStdin {
				var err error
				if stdin, err = cmd.StdinPipe(); err != nil {
					t.Fatal(err)
				}
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if tt.shared {
				cmd.Stderr = cmd.Stdout
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if stdin != nil {
				fmt.Fprintln(stdin, "ping")
				stdin.Close()
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			if err := cmd.Wait(); err != nil {
				t.Fatalf("child: %v\n%s", err, stderr.String())
			}
			want := fmt.Sprintf("polled=%v", tt.wantPolled)
			if tt.wantPolled {
				want += " read=ping"
			}
			if got := strings.TrimSpace(line); got != want {
				t.Errorf("child reported %q, want %q\n%s", got, want, stderr.String())
			}
		})
	}
}

// TestPollStdioChild is TestPollStdio's child: it reports on its stdout
// whether pollStdio switched fds 0 and 1 and, if so, the line it read
// through the new input.
func TestPollStdioChild(t *testing.T) {
	if os.Getenv("SDK_POLLSTDIO_CHILD") != "1" {
		t.Skip("run by TestPollStdio")
	}
	in, out := pollStdio()
	polled := !blocking(0) && !blocking(1)
	if polled != (len(keptStdio) == 2) {
		t.Fatal("pollStdio switched the mode without replacing the files, or the reverse")
	}
	msg := fmt.Sprintf("polled=%v", polled)
	if polled {
		if os.Stdin != in {
			t.Fatal("os.Stdin is not the polled input")
		}
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		msg += " read=" + strings.TrimSpace(line)
	}
	if _, err := fmt.Fprintln(out, msg); err != nil {
		t.Fatal(err)
	}
}
