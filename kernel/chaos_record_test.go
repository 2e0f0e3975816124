//go:build unix

package kernel

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// startLog is the ordered record of plugin starts, published generations
// and reload outcomes, for the crash budget check.
type startLog struct {
	mu      sync.Mutex
	entries []startEntry
}

// startEntry is one of: a start of plugin; a generation published, with
// the members its build started (own); a reload that published generation
// reloaded; a reload that failed; a RestartPlugin of restarted.
type startEntry struct {
	plugin       string
	published    uint64
	own          []string
	reloaded     uint64
	failedReload bool
	restarted    string
}

func (l *startLog) add(e startEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, e)
}

// check asserts that between two successful reloads no plugin was started
// more than budget+1 times (its start, then a restart per crash within the
// budget) for each fresh budget RestartPlugin gave it, plus once per failed
// reload (whose build may have started it), and returns the most starts of
// one plugin between two reloads. A reload's own starts count after it:
// they come with a fresh budget.
func (l *startLog) check(budget int, st *chaosStats) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	reloads := map[uint64]bool{}
	for _, e := range l.entries {
		if e.reloaded != 0 {
			reloads[e.reloaded] = true
		}
	}
	count, budgets, failed, most := map[string]int{}, map[string]int{}, 0, 0
	var pending []string // starts since the last publish
	end := func() {
		for name, n := range count {
			most = max(most, n)
			if n > (budget+1)*(1+budgets[name])+failed {
				st.violate("%q started %d times between two reloads (budget %d, %d explicit restarts, %d failed reloads)",
					name, n, budget, budgets[name], failed)
			}
		}
	}
	for _, e := range l.entries {
		switch {
		case e.plugin != "":
			pending = append(pending, e.plugin)
		case e.failedReload:
			failed++
		case e.restarted != "":
			budgets[e.restarted]++
		case e.published != 0 && reloads[e.published]:
			for _, name := range without(pending, e.own) {
				count[name]++
			}
			end()
			count, budgets, failed = map[string]int{}, map[string]int{}, 0
			for _, name := range e.own {
				count[name] = 1
			}
			pending = nil
		case e.published != 0:
			for _, name := range pending {
				count[name]++
			}
			pending = nil
		}
	}
	for _, name := range pending {
		count[name]++
	}
	end()
	return most
}

// without returns names less one occurrence of each of drop.
func without(names, drop []string) []string {
	left := map[string]int{}
	for _, d := range drop {
		left[d]++
	}
	var out []string
	for _, n := range names {
		if left[n] > 0 {
			left[n]--
			continue
		}
		out = append(out, n)
	}
	return out
}

// chaosFaults is what the plugins recorded in SCRIPT_LOG.
type chaosFaults struct {
	hostile map[string]int // by kind
	orphans []int          // pids of detached helpers
	floods  map[string]int // by kind
	flooded map[string]int // messages or lines sent in floods, by kind
}

func readFaults(t *testing.T, path string) chaosFaults {
	t.Helper()
	f := chaosFaults{hostile: map[string]int{}, floods: map[string]int{}, flooded: map[string]int{}}
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return f
	}
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		what, arg, _ := strings.Cut(sc.Text(), " ")
		switch what {
		case "hostile":
			f.hostile[arg]++
		case "orphan":
			pid, err := strconv.Atoi(arg)
			if err != nil {
				t.Fatalf("bad fault line %q", sc.Text())
			}
			f.orphans = append(f.orphans, pid)
		case "flood":
			kind, count, _ := strings.Cut(arg, " ")
			n, err := strconv.Atoi(count)
			if err != nil {
				t.Fatalf("bad fault line %q", sc.Text())
			}
			f.floods[kind]++
			f.flooded[kind] += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return f
}
