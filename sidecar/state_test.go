package sidecar

import (
	"fmt"
	"strings"
	"testing"
)

// transitions is the graph drawn on stage, as a matrix: a row per stage
// moved from, a column per stage moved to, x for an allowed move, - for a
// refused one. Every pair is listed.
var transitions = []struct {
	from stage
	to   string
}{
	//               starting running faulted killed exited closing crashed closed
	{stageStarting, "   -        x       x      -      x      x       -       -"},
	{stageRunning, "    -        -       x      -      x      x       -       -"},
	{stageFaulted, "    -        x       -      x      x      -       -       -"},
	{stageKilled, "     -        x       -      -      x      -       -       -"},
	{stageExited, "     -        x       -      -      -      -       x       -"},
	{stageClosing, "    -        -       -      -      -      -       -       x"},
	{stageCrashed, "    -        -       -      -      -      -       -       -"},
	{stageClosed, "     -        -       -      -      -      -       -       -"},
}

// TestStateTransitions asserts transition's answer for every move, from
// every stage (armed or not) to every stage, and where it leaves the
// state: an allowed move lands on its target, except an arm in a down
// stage, which keeps the stage; both set armed; a refused move changes
// nothing.
func TestStateTransitions(t *testing.T) {
	if len(transitions) != numStages {
		t.Fatalf("%d rows, want one per stage (%d)", len(transitions), numStages)
	}
	for i, row := range transitions {
		cols := strings.Fields(row.to)
		if row.from != stage(i) || len(cols) != numStages {
			t.Fatalf("row %d: from %v with %d columns, want from %v with %d", i, row.from, len(cols), stage(i), numStages)
		}
		for j, col := range cols {
			to := stage(j)
			for _, armed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/armed=%v->%v", row.from, armed, to), func(t *testing.T) {
					checkTransition(t, state{stage: row.from, armed: armed}, to, col == "x")
				})
			}
		}
	}
}

func checkTransition(t *testing.T, s state, to stage, allowed bool) {
	t.Helper()
	before := s
	from, ok := s.transition(to)
	if from != before.stage || ok != allowed {
		t.Fatalf("transition(%v) from %v = (%v, %v), want (%v, %v)", to, before.stage, from, ok, before.stage, allowed)
	}
	want := before
	if allowed {
		want.stage = to
		if to == stageRunning {
			want.armed = true
			if before.stage.down() {
				want.stage = before.stage
			}
		}
	}
	if s != want {
		t.Errorf("after transition(%v) from %+v: %+v, want %+v", to, before, s, want)
	}
}

// TestStageClasses checks that up, down and terminal sort every stage but
// closing into exactly one class, and that closing() is closing and closed.
func TestStageClasses(t *testing.T) {
	for s := range stage(numStages) {
		classes := 0
		for _, in := range []bool{s.up(), s.down(), s.terminal()} {
			if in {
				classes++
			}
		}
		want := 1
		if s == stageClosing {
			want = 0
		}
		if classes != want {
			t.Errorf("%v is in %d of up, down, terminal; want %d", s, classes, want)
		}
		if got, want := s.closing(), s == stageClosing || s == stageClosed; got != want {
			t.Errorf("%v.closing() = %v, want %v", s, got, want)
		}
		if s.String() != stageNames[s] || s.String() == "" {
			t.Errorf("stage %d is named %q", s, s.String())
		}
	}
}
