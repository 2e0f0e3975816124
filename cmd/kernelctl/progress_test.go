package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/kernel/observe"
)

// TestPrinter feeds the same events to a line printer and to a terminal
// printer and compares everything they write.
func TestPrinter(t *testing.T) {
	plugin := func(name, state string, elapsed time.Duration, err error) observe.Event {
		return observe.Event{Type: observe.EventPlugin, Plugin: name, State: state, Elapsed: elapsed, Err: err}
	}
	starting := func(name string) observe.Event {
		return observe.Event{Type: observe.EventPluginState, Plugin: name, State: string(observe.StateStarting)}
	}
	steps := []func(p *printer){
		func(p *printer) { p.event(starting("redactor")) },
		func(p *printer) { p.event(starting("audit")) },
		func(p *printer) { p.event(plugin("redactor", "ready", 12345*time.Microsecond, nil)) },
		func(p *printer) {
			p.event(observe.Event{Type: observe.EventPluginCrashed, Plugin: "memory", Err: errors.New("gone\nfor good")})
		},
		func(p *printer) {
			p.event(plugin("audit", "failed", time.Millisecond, errors.New("no such file or directory")))
		},
		func(p *printer) { p.event(observe.Event{Type: observe.EventGenerationPublished, Generation: 1}) },
		func(p *printer) {
			p.event(observe.Event{Type: observe.EventWarning, Generation: 1, Message: "shown in the summary"})
		},
		func(p *printer) { p.print("summary\n") },
		func(p *printer) { p.event(observe.Event{Type: observe.EventWarning, Generation: 1, Message: "news"}) },
	}
	tests := []struct {
		name string
		tty  bool
		want string
	}{
		{"lines", false, "starting redactor\nstarting audit\nready redactor in 12.3ms\n" +
			"crashed memory: gone\n  for good\nfailed audit: no such file or directory\nsummary\nwarning: news\n"},
		{"terminal", true, "starting redactor\n" +
			"\x1b[1F\x1b[Jstarting redactor\nstarting audit\n" +
			"\x1b[2F\x1b[Jready redactor in 12.3ms\nstarting audit\n" +
			"\x1b[2F\x1b[Jcrashed memory: gone\n  for good\nready redactor in 12.3ms\nstarting audit\n" +
			"\x1b[2F\x1b[Jready redactor in 12.3ms\nfailed audit: no such file…\n" +
			"summary\nwarning: news\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			p := startPrinter(&out, tt.tty, 28, defaultPrinterOptions())
			for _, step := range steps {
				step(p)
			}
			p.close()
			if got := out.String(); got != tt.want {
				t.Errorf("output:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

// TestPrinterNotifies: a notify prints its event name, at most the
// plugin's rate a second (by the events' times), each plugin on its own
// bucket; the hidden ones are reported per plugin, in plugin order; a
// long name is cut, and one with a control character quoted.
func TestPrinterNotifies(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	notify := func(plugin, name string, at time.Duration) observe.Event {
		return observe.Event{Type: observe.EventNotify, Plugin: plugin, Name: name, Time: t0.Add(at), Data: []byte(`"x"`)}
	}
	var out bytes.Buffer
	opts := defaultPrinterOptions()
	opts.notifyRate = 2
	p := startPrinter(&out, false, 0, opts)
	for i := range 5 {
		p.event(notify("flood", fmt.Sprint("f", i), 0))
	}
	p.event(notify("quiet", "q", 0))
	p.event(notify("flood", "later", 1500*time.Millisecond)) // 1.5s refilled 2 tokens
	p.event(notify("flood", "again", 1500*time.Millisecond))
	p.event(notify("flood", "over", 1500*time.Millisecond))
	p.event(notify("quiet", "\x1b[2Jclear", time.Second))
	p.event(notify("quiet", strings.Repeat("é", 150), 2*time.Second))
	p.close()
	want := "notify flood: f0\nnotify flood: f1\nnotify quiet: q\n" +
		"notify flood: later\nnotify flood: again\n" +
		`notify quiet: "\x1b[2Jclear"` + "\n" +
		"notify quiet: " + strings.Repeat("é", 100) + "…\n" +
		"notify flood: 4 notifies not shown (over 2 a second)\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

// blockedWriter blocks its first write until release is closed, telling
// entered when it is blocked.
type blockedWriter struct {
	entered, release chan struct{}
	once             bool
	buf              bytes.Buffer
}

func (w *blockedWriter) Write(b []byte) (int, error) {
	if !w.once {
		w.once = true
		close(w.entered)
		<-w.release
	}
	return w.buf.Write(b)
}

// TestPrinterDrops: while stdout blocks, the printer holds at most its
// queue's bounds, notifies in half of it, so the kernel's events behind a
// flood of notifies are kept; once stdout takes writes again it prints
// them, then how many it dropped.
func TestPrinterDrops(t *testing.T) {
	w := &blockedWriter{entered: make(chan struct{}), release: make(chan struct{})}
	opts := defaultPrinterOptions()
	opts.queue, opts.notifyRate = 8, 100 // the rate hides none of them
	p := startPrinter(w, false, 0, opts)
	p.print("first\n")
	select {
	case <-w.entered: // the printer is blocked writing "first"
	case <-time.After(waitLimit):
		t.Fatal("the printer never wrote")
	}
	for i := range 20 {
		p.event(observe.Event{Type: observe.EventNotify, Plugin: "flood", Name: fmt.Sprint("n", i)})
	}
	for i := range 5 {
		p.event(observe.Event{Type: observe.EventPluginCrashed, Plugin: fmt.Sprint("c", i), Err: errors.New("gone")})
	}
	close(w.release)
	p.close()
	want := "first\nnotify flood: n0\nnotify flood: n1\nnotify flood: n2\nnotify flood: n3\n" +
		"crashed c0: gone\ncrashed c1: gone\ncrashed c2: gone\ncrashed c3: gone\n" +
		"17 events dropped (stdout was not read)\n"
	if got := w.buf.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

// TestPrintFlags: the printer's bounds come from run's flags, sizes with
// their units; bad values are usage errors.
func TestPrintFlags(t *testing.T) {
	tests := []struct {
		args []string
		want printerOptions
		bad  bool
	}{
		{args: nil, want: printerOptions{queue: 1024, queueBytes: 1 << 20, notifyRate: 10}},
		{args: []string{"--print-queue", "64", "--print-queue-bytes", "512KiB", "--notify-rate", "0"},
			want: printerOptions{queue: 64, queueBytes: 512 << 10}},
		{args: []string{"--print-queue-bytes", "2mib"}, want: printerOptions{queue: 1024, queueBytes: 2 << 20, notifyRate: 10}},
		{args: []string{"--print-queue-bytes", "65536"}, want: printerOptions{queue: 1024, queueBytes: 64 << 10, notifyRate: 10}},
		{args: []string{"--print-queue", "1"}, bad: true},
		{args: []string{"--print-queue-bytes", "1KiB"}, bad: true},
		{args: []string{"--print-queue-bytes", "4MB"}, bad: true},
		{args: []string{"--notify-rate", "-1"}, bad: true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var opts printerOptions
			cmd := &cobra.Command{}
			opts.addFlags(cmd)
			err := cmd.ParseFlags(tt.args)
			if err == nil {
				err = opts.check()
			}
			switch {
			case tt.bad && err == nil:
				t.Errorf("accepted: %+v", opts)
			case !tt.bad && (err != nil || opts != tt.want):
				t.Errorf("got %+v, %v; want %+v", opts, err, tt.want)
			}
		})
	}
}
