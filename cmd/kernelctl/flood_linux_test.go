package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/extkernel/extkernel/admin"
	"github.com/extkernel/extkernel/internal/procstat"
)

// fSetPipeSize is Linux's F_SETPIPE_SZ fcntl.
const fSetPipeSize = 1031

// floodRSSLimit is the bound on kernelctl's resident memory under
// a notify flood with stdout not read (issue 23, item 2).
const floodRSSLimit = 64 << 20

// floodHome writes a home with one package, "flood", running the faulty
// plugin in notify-flood mode: notifies notifies (0: until stopped) of
// data bytes each. It returns the config's path.
func floodHome(t *testing.T, notifies, data int) string {
	t.Helper()
	bin := buildFaulty(t)
	home := t.TempDir()
	dir := filepath.Join(home, "packages", "flood")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(bin, filepath.Join(dir, "faulty")); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{"format": 1, "name": "flood", "version": "0.1.0", "kernel": "^1.0",
		"runtime": map[string]any{"command": "./faulty", "args": []string{"notify-flood"},
			"env": map[string]string{"FLOOD_NOTIFIES": strconv.Itoa(notifies), "FLOOD_DATA": strconv.Itoa(data)}}})
	writeFile(t, filepath.Join(dir, "plugin.json"), string(m))
	config := filepath.Join(home, "kernel.json")
	writeFile(t, config, `{"format": 1, "home": "."}`)
	return config
}

// TestRunNotifyFloodStalledStdout runs kernelctl (this test binary, see
// TestMain) on a home whose plugin floods notifies of 64 KiB, with its
// stdout a pipe nobody reads until the flood is over: kernelctl's resident
// memory stays under 64 MiB throughout, though the flood is 4 times that,
// and once the pipe is read it prints the events it held, then how many it
// dropped. The notify rate is lifted, so that every notify is queued (at
// the default rate of 10 a second, a stall would have to last 51s to
// fill the notifies' half of the queue). The flood's end is seen through the admin API (the plugin's
// last stderr line); no wait is timed.
//
// With EXTKERNEL_FLOOD_SECONDS=n the plugin floods without end and the
// pipe stays unread for n seconds (docs/reliability.md records a 60s run).
func TestRunNotifyFloodStalledStdout(t *testing.T) {
	notifies, stall := 4000, time.Duration(0)
	if s := os.Getenv("EXTKERNEL_FLOOD_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("EXTKERNEL_FLOOD_SECONDS=%q: %v", s, err)
		}
		notifies, stall = 0, time.Duration(n)*time.Second
	}
	config := floodHome(t, notifies, 64<<10)
	home := filepath.Dir(config)

	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	// The pipe holds one page, not 64 KiB (some 3000 notify lines): the
	// printer is held up from the flood's start.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, outW.Fd(), fSetPipeSize, 4096); errno != 0 {
		t.Fatalf("F_SETPIPE_SZ: %v", errno)
	}
	// Every notify gets its line, so that the queue, not the rate, bounds
	// what kernelctl holds.
	cmd := exec.Command(os.Args[0], "run", "--config", config, "--notify-rate", "100000")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "GORACE="+os.Getenv("GORACE")+" atexit_sleep_ms=0")
	stderr := new(syncBuffer)
	cmd.Stdout, cmd.Stderr = outW, stderr
	waitAdminSocket(t, home, func() {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	})
	outW.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })

	rss := sampleRSS(cmd.Process.Pid)
	start := time.Now()
	if stall > 0 {
		<-time.After(stall) // the load's duration, not a wait for a condition
	} else {
		waitFloodDone(t, home)
	}
	peak, samples := rss.stop()
	t.Logf("flood of %s with stdout unread for %v: kernelctl's peak VmRSS %.1f MiB over %d samples",
		floodSize(notifies), time.Since(start).Round(time.Second), float64(peak)/(1<<20), samples)
	if samples == 0 {
		t.Fatal("no VmRSS sample")
	}
	switch {
	case raceEnabled:
		t.Logf("race detector on: the %d MiB bound is not checked", floodRSSLimit>>20)
	case peak >= floodRSSLimit:
		t.Errorf("kernelctl's peak VmRSS %.1f MiB, want under %d MiB", float64(peak)/(1<<20), floodRSSLimit>>20)
	}

	// Now read stdout: what was held, then the count of what was not.
	stdout := newOutBuffer()
	go io.Copy(stdout, outR)
	stdout.waitFor(t, " events dropped (stdout was not read)\n")
	if m := regexp.MustCompile(`(?m)^[1-9][0-9]* events dropped \(stdout was not read\)$`).FindString(stdout.String()); m == "" {
		t.Errorf("no count of dropped events:\n%s", stdout.String())
	} else {
		out := stdout.String()
		t.Logf("once stdout was read: %d notify lines, then %q",
			strings.Count(out[:strings.Index(out, m)], "notify flood: flood\n"), m)
	}
	if !strings.Contains(stdout.String(), "notify flood: flood\n") {
		t.Errorf("no notify line naming the event:\n%.2000s", stdout.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("kernelctl: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(waitLimit):
		t.Fatal("kernelctl did not exit after SIGTERM")
	}
	stdout.waitFor(t, "\nstopped\n") // after "stopping", and the notifies until the plugin stopped
	if out := stdout.String(); !strings.Contains(out, "\nstopping\n") || !strings.HasSuffix(out, "\nstopped\n") {
		t.Errorf("stdout does not end with stopping, stopped:\n%.2000s", out[max(0, len(out)-2000):])
	}
}

// floodSize describes a flood of n notifies of 64 KiB.
func floodSize(n int) string {
	if n == 0 {
		return "64 KiB notifies without end"
	}
	return strconv.Itoa(n) + " notifies of 64 KiB (" + strconv.Itoa(n>>4) + " MiB)"
}

// waitAdminSocket runs start, then waits until a kernel answers on home's
// admin socket, trying again on every change in home/run.
func waitAdminSocket(t *testing.T, home string, start func()) {
	t.Helper()
	dir := filepath.Join(home, "run")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	start()
	deadline := time.After(waitLimit)
	for {
		if c, err := admin.Dial(adminSocket(home)); err == nil {
			c.Close()
			return
		}
		select {
		case <-w.Events:
		case err := <-w.Errors:
			t.Fatalf("watching %s: %v", dir, err)
		case <-deadline:
			t.Fatalf("no kernel answered on %s within %v", adminSocket(home), waitLimit)
		}
	}
}

// waitFloodDone follows the flood plugin's log lines until its last one.
func waitFloodDone(t *testing.T, home string) {
	t.Helper()
	c, err := admin.Dial(adminSocket(home))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitLimit)
	defer cancel()
	err = c.Logs(ctx, admin.LogsRequest{Plugin: "flood", Follow: true}, func(l admin.LogLine) error {
		if strings.Contains(l.Message, "notify flood done") {
			return errFlood
		}
		return nil
	})
	if !errors.Is(err, errFlood) {
		t.Fatalf("the flood did not end within %v: %v", 2*waitLimit, err)
	}
}

var errFlood = errors.New("flood done")

// rssSampler records a process's peak VmRSS.
type rssSampler struct {
	quit chan struct{}
	done chan [2]int64 // peak bytes, samples
}

// sampleRSS reads pid's VmRSS every 20ms until stop.
func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{quit: make(chan struct{}), done: make(chan [2]int64, 1)}
	go func() {
		var peak, n int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, err := procstat.RSS(pid); err == nil {
				peak, n = max(peak, v), n+1
			}
			select {
			case <-s.quit:
				s.done <- [2]int64{peak, n}
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() (peak, samples int64) {
	close(s.quit)
	r := <-s.done
	return r[0], r[1]
}
