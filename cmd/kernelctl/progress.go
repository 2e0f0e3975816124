package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/extkernel/extkernel/kernel/observe"
)

// printer writes everything `run` shows, in order, from one goroutine it
// owns: kernel events (pushed by the kernel's Subscribe callback, which
// therefore never blocks on the terminal) and the text the command prints.
//
// On a terminal, plugin progress is a live block of one line per plugin,
// redrawn in place; other lines are printed above it, and text from the
// command freezes it. Elsewhere every event is one line.
//
// What waits for stdout is bounded: events and text are queued in an
// observe.Queue (printerOptions.queue and queueBytes; notifies get half),
// which drops the newest when full; once the goroutine can write again it
// prints what it took, then "N events dropped (stdout was not read)".
// A notify is queued without its data, its name cut to maxNotifyName
// bytes, and only when the plugin's rate (printerOptions.notifyRate)
// allows a line: the others are counted, and reported once a second.
//
// Lifecycle: newPrinter starts the goroutine; close prints what is queued
// and waits for it to end. event and print MUST NOT be called after close.
type printer struct {
	out      io.Writer
	tty      bool
	width    int // terminal columns, for tty
	queue    *observe.Queue
	notifies *notifyLimiter
	quit     chan struct{} // closed by close
	done     chan struct{} // closed when the goroutine ends

	// Owned by the goroutine.
	live       []liveLine        // tty: the plugin lines being redrawn
	summarized bool              // the command printed text: later warnings are news
	states     map[string]string // last supervision state per plugin
	warnings   genWarnings       // of the last two generations published
}

// genWarnings are the warnings of the generation published last (cur)
// and of the one before it (prev): a generation's warning that the one
// before had too (a restart republishes them all) is not news.
type genWarnings struct {
	prev, cur map[string]bool
}

// published starts a generation's warnings.
func (w *genWarnings) published() { w.prev, w.cur = w.cur, map[string]bool{} }

// news records a warning of the generation published last and reports
// whether the generation before it did not have it.
func (w *genWarnings) news(msg string) bool {
	if w.cur == nil {
		w.cur = map[string]bool{}
	}
	w.cur[msg] = true
	return !w.prev[msg]
}

// textEvent is the type of the queued events that carry text the command
// prints (in Message); no kernel event has it.
const textEvent observe.EventType = "kernelctl-text"

// notifyReportEvery is how often the notifies a plugin's rate hid are
// reported, at most.
const notifyReportEvery = time.Second

type liveLine struct {
	plugin, text string
}

// newPrinter starts a printer on out, live on a terminal.
func newPrinter(out io.Writer, opts printerOptions) *printer {
	tty, width := false, 0
	if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty, width = true, 80
		if cols, ok := terminalWidth(f); ok {
			width = cols
		}
	}
	return startPrinter(out, tty, width, opts)
}

// startPrinter starts a printer; tty selects the live block, width cuts
// its lines.
func startPrinter(out io.Writer, tty bool, width int, opts printerOptions) *printer {
	p := &printer{out: out, tty: tty, width: width,
		queue:    &observe.Queue{MaxEvents: opts.queue, MaxBytes: int64(opts.queueBytes)},
		notifies: newNotifyLimiter(opts.notifyRate),
		quit:     make(chan struct{}), done: make(chan struct{})}
	go p.loop()
	return p
}

// event queues a kernel event; it is the kernel's Subscribe callback. A
// notify is queued without its data (never printed) and its name cut,
// when its plugin's rate allows a line. An audit is not printed (one per
// host capability call: kernelctl events shows them).
func (p *printer) event(e observe.Event) {
	if e.Type == observe.EventAudit {
		return
	}
	if e.Type == observe.EventNotify {
		if !p.notifies.allow(e.Plugin, e.Time) {
			return
		}
		e.Data, e.Name = nil, notifyName(e.Name)
	}
	p.queue.Push(e)
}

// print queues text written as is once everything queued before it is.
func (p *printer) print(text string) { p.queue.Push(observe.Event{Type: textEvent, Message: text}) }

// warn prints "warning: ERR" when err is not nil.
func (p *printer) warn(err error) {
	if err != nil {
		p.print(fmt.Sprintf("warning: %v\n", err))
	}
}

// close prints everything queued and stops the goroutine.
func (p *printer) close() {
	close(p.quit)
	<-p.done
}

func (p *printer) loop() {
	defer close(p.done)
	var report <-chan time.Time // armed while hidden notifies wait for their report
	for {
		select {
		case <-p.queue.Ready():
			p.drain()
		case <-p.notifies.pending:
			if report == nil {
				report = time.After(notifyReportEvery)
			}
		case <-report:
			report = nil
			p.reportNotifies()
		case <-p.quit:
			p.drain()
			p.reportNotifies()
			return
		}
	}
}

// drain prints what the queue holds, then how many events it dropped.
func (p *printer) drain() {
	events, dropped := p.queue.Take()
	for _, e := range events {
		if e.Type == textEvent {
			p.freeze()
			io.WriteString(p.out, e.Message)
			p.summarized = true
			continue
		}
		p.show(e)
	}
	if dropped > 0 {
		p.line(fmt.Sprintf("%d events dropped (stdout was not read)", dropped))
	}
}

// reportNotifies prints the count of each plugin's hidden notifies.
func (p *printer) reportNotifies() {
	for _, l := range p.notifies.report() {
		p.line(l)
	}
}

// show prints one event: plugin progress into the live block on a
// terminal, everything else as a line.
func (p *printer) show(e observe.Event) {
	line, ok := p.eventLine(e)
	switch {
	case !ok:
	case p.tty && (e.Type == observe.EventPlugin || e.Type == observe.EventPluginState && e.State == string(observe.StateStarting)):
		p.setLive(e.Plugin, line)
	default:
		p.line(line)
	}
}

// eventLine formats e; ok is false for events the summary already shows
// (the generation `run` started and its warnings) and for a generation's
// warnings that the generation before it had too.
func (p *printer) eventLine(e observe.Event) (line string, ok bool) {
	switch e.Type {
	case observe.EventPlugin:
		switch e.State {
		case "ready":
			return fmt.Sprintf("ready %s in %s", e.Plugin, roundDuration(e.Elapsed)), true
		case "failed":
			return fmt.Sprintf("failed %s: %v", e.Plugin, e.Err), true
		}
		return e.State + " " + e.Plugin, true
	case observe.EventPluginCrashed:
		return fmt.Sprintf("crashed %s: %v", e.Plugin, e.Err), true
	case observe.EventWarning:
		return "warning: " + e.Message, p.warnings.news(e.Message) && p.summarized
	case observe.EventGenerationPublished:
		p.warnings.published()
		return fmt.Sprintf("generation %d published", e.Generation), p.summarized
	case observe.EventBuildFailed:
		// Start's error says it all; a later build is news.
		return fmt.Sprintf("generation %d failed: %v", e.Generation, e.Err), p.summarized
	case observe.EventPluginState:
		return p.stateLine(e)
	case observe.EventNotify:
		return fmt.Sprintf("notify %s: %s", e.Plugin, e.Name), true
	case observe.EventBake:
		line := fmt.Sprintf("bake %s: %s", e.Plugin, e.Message)
		if e.State == observe.BakeRolledBack {
			line += fmt.Sprintf(", serving again %s after it failed", roundDuration(e.Elapsed))
		}
		if e.Err != nil {
			line += fmt.Sprintf(": %v", e.Err)
		}
		return line, true
	}
	return fmt.Sprintf("%s %s: %s", e.Type, e.Plugin, e.Message), true
}

// stateLine formats a supervision state change: "starting" as a start's
// first line (its outcome comes as a progress event); "ready" only after
// "unresponsive" (a start's is shown by its progress event); failures at
// the first start are shown by progress too.
func (p *printer) stateLine(e observe.Event) (string, bool) {
	prev := p.states[e.Plugin]
	if p.states == nil {
		p.states = map[string]string{}
	}
	p.states[e.Plugin] = e.State
	switch observe.PluginState(e.State) {
	case observe.StateStarting:
		return "starting " + e.Plugin, true
	case observe.StateUnresponsive, observe.StateRestarting:
		return fmt.Sprintf("%s %s: %s", e.State, e.Plugin, e.Message), true
	case observe.StateFailed:
		return fmt.Sprintf("failed %s: %s", e.Plugin, e.Message), p.summarized
	case observe.StateReady:
		return "responsive again " + e.Plugin, prev == string(observe.StateUnresponsive)
	}
	return "", false
}

// line prints a permanent line (continuation lines indented), above the
// live block on a terminal.
func (p *printer) line(s string) {
	s = indentLines(s, "  ") + "\n"
	if !p.tty || len(p.live) == 0 {
		io.WriteString(p.out, s)
		return
	}
	io.WriteString(p.out, p.eraseLive()+s+p.drawLive())
}

// setLive replaces the plugin's line in the live block, or adds it, and
// redraws the block.
func (p *printer) setLive(plugin, text string) {
	erase := p.eraseLive()
	found := false
	for i := range p.live {
		if p.live[i].plugin == plugin {
			p.live[i].text, found = text, true
		}
	}
	if !found {
		p.live = append(p.live, liveLine{plugin, text})
	}
	io.WriteString(p.out, erase+p.drawLive())
}

// freeze leaves the live block on screen as it is and stops redrawing it.
func (p *printer) freeze() { p.live = nil }

// eraseLive moves the cursor to the start of the live block and clears
// from there to the end of the screen.
func (p *printer) eraseLive() string {
	if len(p.live) == 0 {
		return ""
	}
	return fmt.Sprintf("\x1b[%dF\x1b[J", len(p.live))
}

// drawLive renders the live block, one terminal row per plugin: the text
// is cut to the terminal's width so that the cursor arithmetic holds.
func (p *printer) drawLive() string {
	var b strings.Builder
	for _, l := range p.live {
		b.WriteString(fitWidth(l.text, p.width-1))
		b.WriteByte('\n')
	}
	return b.String()
}

// fitWidth returns the first line of s, cut to at most n runes.
func fitWidth(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if utf8.RuneCountInString(s) <= n || n < 1 {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// roundDuration keeps three significant digits or so: 12ms, 850µs, 1.204s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
