package capability

import (
	"slices"
	"strings"
)

// cycles returns one Cycle warning per strongly connected component of the
// members' dependency graph (depsOf, sorted and deduplicated) that has more
// than one member or a self-loop. It runs Tarjan's algorithm iteratively,
// so deep dependency chains cannot overflow the goroutine stack, in time
// linear in members plus dependency edges.
func (r *resolver) cycles() []Problem {
	n := len(r.pkgs)
	t := tarjan{
		r:       r,
		index:   make([]int, n),
		low:     make([]int, n),
		onStack: make([]bool, n),
		comp:    make([]int, n),
		parent:  make([]int, n),
		next:    1,
	}
	for v := range n {
		if r.member[v] && t.index[v] == 0 {
			t.visit(v)
		}
	}
	return t.problems
}

// tarjan is the state of one strongly-connected-components search. index
// is 0 for an unvisited node; comp marks the members of the component being
// reported, by a number unique to that component.
type tarjan struct {
	r        *resolver
	index    []int
	low      []int
	onStack  []bool
	stack    []int
	comp     []int
	parent   []int
	next     int
	comps    int
	problems []Problem
}

// visit runs the depth-first search from root with an explicit call stack.
func (t *tarjan) visit(root int) {
	type frame struct{ v, edge int }
	call := []frame{{v: root}}
	t.push(root)
	for len(call) > 0 {
		top := len(call) - 1
		v := call[top].v
		if e := call[top].edge; e < len(t.r.depsOf(v)) {
			call[top].edge++
			w := t.r.depsOf(v)[e]
			if t.index[w] == 0 {
				t.push(w)
				call = append(call, frame{v: w})
			} else if t.onStack[w] {
				t.low[v] = min(t.low[v], t.index[w])
			}
			continue
		}
		call = call[:top]
		if top > 0 {
			u := call[top-1].v
			t.low[u] = min(t.low[u], t.low[v])
		}
		if t.low[v] == t.index[v] {
			t.pop(v)
		}
	}
}

func (t *tarjan) push(v int) {
	t.index[v], t.low[v] = t.next, t.next
	t.next++
	t.stack = append(t.stack, v)
	t.onStack[v] = true
}

// pop removes the component rooted at v from the stack and reports it if it
// is a cycle.
func (t *tarjan) pop(v int) {
	i := len(t.stack) - 1
	for t.stack[i] != v {
		i--
	}
	scc := t.stack[i:]
	t.stack = t.stack[:i]
	t.comps++
	for _, w := range scc {
		t.onStack[w] = false
		t.comp[w] = t.comps
	}
	if len(scc) == 1 {
		if _, self := slices.BinarySearch(t.r.depsOf(v), v); !self {
			return
		}
	}
	t.problems = append(t.problems, t.cycleProblem(scc))
}

// cycleProblem reports a component: the shortest cycle through its lowest
// named member, plus the other members of the component if any.
func (t *tarjan) cycleProblem(scc []int) Problem {
	start := slices.Min(scc)
	path := t.shortestCycle(start)
	onPath := make(map[int]bool, len(path))
	names := make([]string, len(path))
	for i, v := range path {
		onPath[v] = true
		names[i] = t.r.pkgs[v].Name
	}
	var others []string
	for _, v := range scc {
		if !onPath[v] {
			others = append(others, t.r.pkgs[v].Name)
		}
	}
	slices.Sort(others)
	msg := "dependency cycle: " + strings.Join(names, " -> ") + " -> " + names[0]
	if len(others) > 0 {
		msg += ", also involving " + strings.Join(others, ", ")
	}
	msg += " (the cycle does not stop startup; its members start together)"
	return Problem{Severity: Warning, Kind: Cycle, Cycle: names, Message: msg}
}

// shortestCycle finds, breadth first within start's component, the shortest
// path from start back to itself, and returns it without the closing start.
// Dependencies are visited in name order, so the result is deterministic.
func (t *tarjan) shortestCycle(start int) []int {
	id := t.comp[start]
	// A visited node's comp is set to -id so each component is searched
	// without clearing any shared state.
	queue := []int{start}
	t.comp[start] = -id
	for head := 0; head < len(queue); head++ {
		u := queue[head]
		for _, w := range t.r.depsOf(u) {
			if w == start {
				return t.pathTo(start, u)
			}
			if t.comp[w] == id {
				t.comp[w] = -id
				t.parent[w] = u
				queue = append(queue, w)
			}
		}
	}
	panic("capability: strongly connected component without a cycle")
}

// pathTo follows parent links from end back to start and returns the path
// from start to end.
func (t *tarjan) pathTo(start, end int) []int {
	var path []int
	for v := end; v != start; v = t.parent[v] {
		path = append(path, v)
	}
	path = append(path, start)
	slices.Reverse(path)
	return path
}
