//go:build linux

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/internal/confine"
	"github.com/extkernel/extkernel/internal/procstat"
	"github.com/extkernel/extkernel/pluginpkg"
)

// minimalABI is the Landlock ABI the minimal set needs under "require"
// (signals scoped to the plugin's sandbox): below it "require" refuses
// every plugin.
const minimalABI = 6

// modeFor is the mode the suite runs the enforced cases under on Landlock
// ABI abi: "require", or "best-effort" where "require" would refuse
// every plugin.
func modeFor(abi int) string {
	if abi < minimalABI {
		return pluginpkg.ConfineBestEffort
	}
	return pluginpkg.ConfineRequire
}

// landlockABI returns the Landlock ABI the confinement plans for here (the
// kernel's, or one a test simulates).
func (w *escapeWorld) landlockABI(t *testing.T) int {
	t.Helper()
	opts := w.opts
	opts.Confinement = pluginpkg.Confinement{Mode: pluginpkg.ConfineBestEffort}
	r, err := PlanConfinement(w.pkg(t, permFiles), opts)
	if err != nil {
		t.Fatal(err)
	}
	return r.LandlockABI
}

// escapeRow is one line of the suite's summary.
type escapeRow struct {
	name, by string
	outcome  string // "stopped", "ESCAPED", "not enforced" or "skipped"
	result   string // what the attempt answered, or why it was not made
}

// outcomeOf is a row's outcome for an attempt made.
func outcomeOf(escaped bool) string {
	if escaped {
		return "ESCAPED"
	}
	return "stopped"
}

// runEscapeSuite runs every case on Landlock ABI abi: a case enforced at
// abi runs under mode and must be stopped with nothing outside changed;
// one that is not is refused under "require", naming the rule, and
// reported as not enforced under "best-effort".
func runEscapeSuite(t *testing.T, w *escapeWorld, abi int, mode string) []escapeRow {
	t.Helper()
	var rows []escapeRow
	for _, tc := range escapeCases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needs != nil {
				if why := tc.needs(w); why != "" {
					rows = append(rows, escapeRow{tc.name, mechanisms(tc), "skipped", why})
					t.Skip(why)
				}
			}
			if need := caseABI(tc); need > abi {
				rows = append(rows, escapeRow{tc.name, mechanisms(tc), "not enforced", w.notEnforced(t, tc, abi)})
				return
			}
			c, err := w.start(t, tc.perms, mode)
			if err != nil {
				t.Fatalf("start under %s: %v", mode, err)
			}
			var result string
			var escaped bool
			if tc.do == "outlive" {
				result, escaped = w.outlive(t, c, tc)
			} else {
				result, escaped = w.attemptOnce(t, c, tc)
			}
			rows = append(rows, escapeRow{tc.name, mechanisms(tc), outcomeOf(escaped), result})
		})
	}
	for _, l := range []*watch{w.forbidden, w.udp, w.admin, w.abstract} {
		if n := l.hits.Load(); n != 0 {
			t.Errorf("ESCAPE: %s was reached %d time(s)", l.addr, n)
		}
	}
	return rows
}

// attemptOnce makes tc's attempt with c, stops c, and checks the answer
// and that nothing outside changed; it returns the answer and whether the
// attempt escaped.
func (w *escapeWorld) attemptOnce(t *testing.T, c *Client, tc escapeCase) (string, bool) {
	t.Helper()
	got := attempt(t, c, tc.do, tc.in(w))
	closeEscape(t, c)
	escaped := !stopped(tc.by, got)
	if escaped {
		t.Errorf("ESCAPE: %s answered %q; want it stopped by %s", tc.do, got, tc.by)
	}
	if tc.intact != nil {
		if err := tc.intact(w); err != nil {
			escaped = true
			t.Errorf("ESCAPE: %s: %v", tc.do, err)
		}
	}
	return got, escaped
}

// closeEscape stops the escape plugin and checks that nothing of its
// process group is left (the target plugin, a child of the test too,
// still runs: assertNoProcesses runs once it stopped).
func closeEscape(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	pgid := c.PID()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		if st, err := procstat.Read(pid); err == nil && st.PGRP == pgid {
			t.Errorf("process %d (state %s) is still in plugin process group %d", pid, st.State, pgid)
		}
	}
}

// outlive has the plugin start a detached child (a session of its own,
// its stdio elsewhere than the plugin's pipes, so that stopping the plugin
// leaves it running), stops the plugin, and waits for the child's report
// of the cases tc.then made after the plugin's end: each must be stopped
// as it is from the plugin itself. It returns a summary and whether any
// attempt escaped.
func (w *escapeWorld) outlive(t *testing.T, c *Client, tc escapeCase) (string, bool) {
	t.Helper()
	report := filepath.Join(w.data, "outlive.json")
	_ = os.Remove(report)
	a := escapeAttempt{Path: report}
	for _, name := range tc.then {
		sub := caseNamed(name)
		x := sub.in(w)
		x.Do = sub.do
		a.Then = append(a.Then, x)
	}
	got := attempt(t, c, "outlive", a)
	pid, ok := strings.CutPrefix(got, "ok: child ")
	if !ok {
		closeEscape(t, c)
		t.Fatalf("outlive answered %q", got)
	}
	closeEscape(t, c)
	reapWithin(t, atoi(t, pid))
	var r struct {
		PID, PPID int
		Results   []string
	}
	b, err := os.ReadFile(report)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil || len(r.Results) != len(tc.then) {
		t.Fatalf("the child's report: %s, %v; want %d results", b, err, len(tc.then))
	}
	if r.PPID != os.Getpid() {
		t.Errorf("the child's parent was %d when it acted, not the test (%d): it did not outlive the plugin", r.PPID, os.Getpid())
	}
	escaped := 0
	for i, name := range tc.then {
		sub := caseNamed(name)
		if !stopped(sub.by, r.Results[i]) {
			escaped++
			t.Errorf("ESCAPE: the child's %s answered %q; want it stopped by %s", name, r.Results[i], sub.by)
		}
		if sub.intact != nil {
			if err := sub.intact(w); err != nil {
				escaped++
				t.Errorf("ESCAPE: the child's %s: %v", name, err)
			}
		}
	}
	return fmt.Sprintf("child %d outlived the plugin; %d of %d attempts stopped", r.PID, len(tc.then)-escaped, len(tc.then)), escaped > 0
}

// notEnforced checks what happens to a case Landlock ABI abi cannot
// enforce: "require" refuses to start the plugin (phase "confine"),
// naming the rule; "best-effort" starts it and reports the rule in
// NotEnforced. The attempt is not made: it would succeed, as reported.
func (w *escapeWorld) notEnforced(t *testing.T, tc escapeCase, abi int) string {
	t.Helper()
	rules := rulesMissing(tc, abi)
	_, err := w.start(t, tc.perms, pluginpkg.ConfineRequire)
	var se *StartError
	if !errors.As(err, &se) || se.Phase != phaseConfine {
		t.Fatalf("require on Landlock ABI %d: Start = %v; want a refusal in phase %q", abi, err, phaseConfine)
	}
	c, err := w.start(t, tc.perms, pluginpkg.ConfineBestEffort)
	if err != nil {
		t.Fatalf("best-effort on Landlock ABI %d: %v", abi, err)
	}
	r := c.Confinement()
	closeEscape(t, c)
	for _, rule := range rules {
		if !strings.Contains(se.Error(), rule) {
			t.Errorf("require's refusal does not name %q: %v", rule, se)
		}
		if !slices.ContainsFunc(r.NotEnforced, func(s string) bool { return strings.Contains(s, rule) }) {
			t.Errorf("best-effort's report does not name %q as not enforced: %q", rule, r.NotEnforced)
		}
	}
	return fmt.Sprintf("not enforced (Landlock ABI %d): require refuses; best-effort reports %q", abi, strings.Join(rules, "; "))
}

// rulesMissing returns the words of the Report rules that say what of tc
// Landlock ABI abi lacks.
func rulesMissing(tc escapeCase, abi int) []string {
	if len(tc.then) > 0 {
		var out []string
		for _, name := range tc.then {
			for _, r := range rulesMissing(caseNamed(name), abi) {
				if !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		}
		return out
	}
	if mechanismABI[tc.by] <= abi {
		return nil
	}
	switch {
	case tc.by == byTCP:
		return []string{"TCP connections restricted to ports"}
	case tc.by == byUDP:
		return []string{"UDP restricted to port 53"}
	case tc.by == byScope:
		return []string{"signals to processes outside the plugin's sandbox"}
	case abi == 0:
		return []string{"Landlock is not available"}
	}
	return []string{"truncating a file granted for reading only"} // byTruncate
}

// logEscapeTable logs the suite's summary: how many cases were stopped,
// escaped or not enforced, then each case, what stops it, its outcome and
// what the attempt answered.
func logEscapeTable(t *testing.T, title string, rows []escapeRow) {
	count := map[string]int{}
	for _, r := range rows {
		count[r.outcome]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "escape suite, %s: %d cases, %d stopped, %d escaped, %d not enforced, %d skipped\n",
		title, len(rows), count["stopped"], count["ESCAPED"], count["not enforced"], count["skipped"])
	fmt.Fprintf(&b, "%-26s %-30s %-12s %s\n", "case", "stopped by", "outcome", "result")
	for _, r := range rows {
		res := strings.ReplaceAll(r.result, "\n", " ")
		if len(res) > 100 {
			res = res[:100] + "..."
		}
		fmt.Fprintf(&b, "%-26s %-30s %-12s %s\n", r.name, r.by, r.outcome, res)
	}
	t.Log(b.String())
}

// TestEscapeOlderLandlock runs the suite as on kernels with each older
// Landlock ABI, 0 (none) to 6 (before UDP rules: 4 brought TCP rules, 6
// the scopes), below this kernel's, simulated by capping the ABI the
// confinement plans for (Start then applies only that ABI's rights, as
// such a kernel would): the cases still enforced are stopped, under
// "require" from ABI 6 and "best-effort" below (where "require" refuses
// every plugin); for each of the others, "require" refuses to start the
// plugin naming the rule and "best-effort" reports it; the summary lists
// which are not enforced.
func TestEscapeOlderLandlock(t *testing.T) {
	w := newEscapeWorld(t)
	kernel := w.landlockABI(t)
	for abi := range min(kernel, minimalABI+1) {
		t.Run(fmt.Sprintf("landlock-abi-%d", abi), func(t *testing.T) {
			defer confine.SimulateLandlockABI(abi)()
			if got := w.landlockABI(t); got != abi {
				t.Fatalf("simulated Landlock ABI %d, planned for %d", abi, got)
			}
			rows := runEscapeSuite(t, w, abi, modeFor(abi))
			var missing []string
			for _, tc := range escapeCases {
				if caseABI(tc) > abi {
					missing = append(missing, tc.name)
				}
			}
			logEscapeTable(t, fmt.Sprintf("simulated Landlock ABI %d (not enforced: %s)", abi, strings.Join(missing, ", ")), rows)
		})
	}
}
