//go:build unix

package kernel

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// checkBounds checks what the host spent against its bounds: its heap
// against chaosHeapBound, its log against chaosLogBound.
func (r *chaosRig) checkBounds(f chaosFaults) {
	if peak, bound := r.st.heapPeak.Load(), chaosHeapBound(len(r.plugs)); peak > bound {
		r.st.violate("the host's heap reached %d MiB, over its bound of %d MiB", peak>>20, bound>>20)
	}
	if logged, bound := r.log.bytes.Load(), r.logBound(f); logged > bound {
		r.st.violate("the host logged %d KiB, over its bound of %d KiB", logged>>10, bound>>10)
	}
}

// logBound is chaosLogBound for this run.
func (r *chaosRig) logBound(f chaosFaults) int64 {
	st := &r.st
	return chaosLogBound(len(r.plugs), *chaosDuration, st.starts.Load(),
		st.crashes.Load()+st.reloads.Load()+st.explicitRestarts.Load(), int64(f.flooded["wide"]))
}

// successRate returns the share of the calls made between faults that
// succeeded, and their number.
func (r *chaosRig) successRate() (float64, int64) {
	var between, ok int64
	for i := range r.st.kinds {
		between += r.st.kinds[i].between.Load()
		ok += r.st.kinds[i].betweenOK.Load()
	}
	if between == 0 {
		return 0, 0
	}
	return float64(ok) / float64(between), between
}

// checkCoverage fails the test when the run did not make every kind of
// call or kill any sidecar, or when fewer than chaosMinSuccess of the
// calls made between faults succeeded.
func (r *chaosRig) checkCoverage(t *testing.T, summary string) {
	for i := range r.st.kinds {
		if r.st.kinds[i].calls.Load() == 0 {
			t.Fatalf("chaos made no %s: %s", chaosKindNames[i], summary)
		}
	}
	if r.st.kills.Load() == 0 {
		t.Fatalf("chaos killed no sidecar: %s", summary)
	}
	if rate, _ := r.successRate(); rate < chaosMinSuccess {
		t.Fatalf("%.1f%% of the calls made between faults succeeded, want at least %.0f%%: %s", 100*rate,
			100*chaosMinSuccess, summary)
	}
}

// summary is the run's one line of counters (docs/reliability.md says
// what each means).
func (r *chaosRig) summary(f chaosFaults, orphansLeft, mostStarts, late int) string {
	st := &r.st
	var calls, ok int64
	var kinds []string
	for i := range st.kinds {
		k := &st.kinds[i]
		calls += k.calls.Load()
		ok += k.ok.Load()
		kinds = append(kinds, fmt.Sprintf("%s %d/%d/%d", chaosKindNames[i], k.calls.Load(), k.between.Load(), k.betweenOK.Load()))
	}
	rate, between := r.successRate()
	var b strings.Builder
	fmt.Fprintf(&b, "chaos: %v, %d plugins, %d callers: %d calls, %d ok; %d made between faults, %.1f%% of them ok "+
		"(by kind, calls/between faults/ok of those: %s); %d chains with skipped optional steps, %d cycles ended at the depth bound, "+
		"%d slow and %d stalled consumers; ",
		*chaosDuration, len(r.plugs), *chaosCallers, calls, ok, between, 100*rate, strings.Join(kinds, ", "),
		st.skipped.Load(), st.depthEnds.Load(), st.slowConsumers.Load(), st.stalls.Load())
	fmt.Fprintf(&b, "faults: %d kills, %d crashes seen, %d starts, %d budgets exhausted, %d hostile frames (%d garbage, %d oversized, "+
		"%d duplicate-id; %d protocol faults seen), %d detached helpers (%d left); ",
		st.kills.Load(), st.crashes.Load(), st.starts.Load(), st.exhausted.Load(), f.hostile["garbage"]+f.hostile["oversized"]+
			f.hostile["duplicate-id"], f.hostile["garbage"], f.hostile["oversized"], f.hostile["duplicate-id"],
		st.protocolFaults.Load(), len(f.orphans), orphansLeft)
	fmt.Fprintf(&b, "floods: %d of notify events (%d sent, %d seen), %d of malformed messages (%d), %d of stderr lines (%d), "+
		"%d of log notifications (%d), %d of wide lines (%d); ",
		f.floods["notify"], f.flooded["notify"], st.notifies.Load(), f.floods["garbage"], f.flooded["garbage"],
		f.floods["stderr"], f.flooded["stderr"], f.floods["log"], f.flooded["log"], f.floods["wide"], f.flooded["wide"])
	fmt.Fprintf(&b, "reloads: %d (%d rolled back, %d of them breaking a required package), %d explicit restarts of exhausted plugins; "+
		"most starts of one plugin between reloads: %d (%d allowed per fresh budget); ",
		st.reloads.Load(), st.failedReloads.Load(), st.brokenReloads.Load(), st.explicitRestarts.Load(), mostStarts, chaosBudget+1)
	fmt.Fprintf(&b, "host: heap peak %d MiB (%d MiB before the start; bound %d MiB), log %d KiB in %d lines "+
		"(bound %d KiB; longest %d bytes), "+
		"%d streams holding at most %d chunks and %d KiB; largest timer delay %v (%d calls past their bound by no more); "+
		"invariant violations: %d",
		st.heapPeak.Load()>>20, r.heapBase>>20, chaosHeapBound(len(r.plugs))>>20, r.log.bytes.Load()>>10, r.log.lines.Load(),
		r.logBound(f)>>10, r.log.longest.Load(), r.streams.count, r.streams.peak, r.streams.peakB>>10,
		time.Duration(st.timerLag.Load()).Round(time.Millisecond), late, st.violations.Load())
	return b.String()
}
