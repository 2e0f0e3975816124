package main

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/extkernel/extkernel/kernel/observe"
)

// TestPrinter feeds the same events to a line printer and to a terminal
// printer and compares everything they write.
func TestPrinter(t *testing.T) {
	plugin := func(name, state string, elapsed time.Duration, err error) observe.Event {
		return observe.Event{Type: observe.EventPlugin, Plugin: name, State: state, Elapsed: elapsed, Err: err}
	}
	steps := []func(p *printer){
		func(p *printer) { p.event(plugin("redactor", "starting", 0, nil)) },
		func(p *printer) { p.event(plugin("audit", "starting", 0, nil)) },
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
			p := startPrinter(&out, tt.tty, 28)
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
