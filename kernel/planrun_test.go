package kernel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
)

// planRunCase is one random home and host spec of TestPlanPredictsRun.
type planRunCase struct {
	plugs  []plug
	points []contribution.Point
	slots  []contribution.Slot
	strict bool
	owners map[contribution.Slot]string
}

var (
	planRunPoints = []string{"tool.before", "tool.after"}
	planRunSlots  = []string{"context.compactor", "tools.router"}
)

// genPlanRunCase draws one to four scripted plugins, each optional or
// required, intercepting and claiming a random subset of two points and
// two slots at a random priority, providing its own capability and maybe
// requiring an earlier one's; and a host that declares a random subset of
// the points and slots, strict or not, naming a random owner for some
// slots.
func genPlanRunCase(t *rapid.T) planRunCase {
	var c planRunCase
	n := rapid.IntRange(1, 4).Draw(t, "plugins")
	for i := range n {
		name := fmt.Sprintf("p%d", i)
		p := plug{name: name, required: rapid.IntRange(0, 3).Draw(t, name+".required") == 0,
			priority:   rapid.IntRange(-2, 2).Draw(t, name+".priority"),
			intercepts: rapid.SliceOfDistinct(rapid.SampledFrom(planRunPoints), rapid.ID[string]).Draw(t, name+".intercepts"),
			replaces:   rapid.SliceOfDistinct(rapid.SampledFrom(planRunSlots), rapid.ID[string]).Draw(t, name+".replaces"),
			provides:   []string{"cap." + name + "@1.0.0"}}
		slices.Sort(p.intercepts)
		slices.Sort(p.replaces)
		p.env = map[string]string{"SCRIPT_INTERCEPT": strings.Join(p.intercepts, ","), "SCRIPT_SLOTS": strings.Join(p.replaces, ",")}
		if i > 0 && rapid.IntRange(0, 2).Draw(t, name+".requires") == 0 {
			p.requires = []string{fmt.Sprintf("cap.p%d ^1.0", rapid.IntRange(0, i-1).Draw(t, name+".dependency"))}
		}
		c.plugs = append(c.plugs, p)
	}
	for _, pt := range planRunPoints {
		if rapid.Bool().Draw(t, "declare "+pt) {
			c.points = append(c.points, contribution.Point(pt))
		}
	}
	c.owners = map[contribution.Slot]string{}
	for _, sl := range planRunSlots {
		if rapid.Bool().Draw(t, "declare "+sl) {
			c.slots = append(c.slots, contribution.Slot(sl))
			if rapid.IntRange(0, 2).Draw(t, "owner of "+sl) == 0 {
				c.owners[contribution.Slot(sl)] = fmt.Sprintf("p%d", rapid.IntRange(0, n-1).Draw(t, "owner "+sl))
			}
		}
	}
	c.strict = rapid.Bool().Draw(t, "strict")
	return c
}

// TestPlanPredictsRun is the property that plan and run agree (issue 26
// item 6): for random homes and host specs, the plan from an empty
// generation (PlanFrom, what `kernelctl plan` and `doctor` show) predicts
// the build's outcome (fails or not), and for a build that succeeds,
// exactly the interceptor chains, the slot owners and the optional
// plugins left out that the kernel publishes. 30 cases, seeded, so a
// failure reproduces.
func TestPlanPredictsRun(t *testing.T) {
	gen := rapid.Custom(genPlanRunCase)
	for seed := range 30 {
		c := gen.Example(seed)
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkPlanPredictsRun(t, c) })
	}
	noChildren(t)
}

func checkPlanPredictsRun(t *testing.T, c planRunCase) {
	cfg := testConfig(writeHome(t, c.plugs...))
	cfg.Points, cfg.Slots, cfg.Strict, cfg.SlotOwners = c.points, c.slots, c.strict, c.owners
	t.Logf("points %q slots %q strict %v owners %v", c.points, c.slots, c.strict, c.owners)
	for _, p := range c.plugs {
		t.Logf("%s required %v priority %d intercepts %q replaces %q requires %q", p.name, p.required, p.priority, p.intercepts, p.replaces, p.requires)
	}
	plan, err := PlanFrom(cfg, &generation.Snapshot{Format: generation.SnapshotFormat})
	if err != nil {
		t.Fatalf("PlanFrom: %v", err)
	}
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = k.Start(ctx)
	var be *generation.BuildError
	switch {
	case err != nil && !errors.As(err, &be):
		t.Fatalf("Start: %v", err)
	case (err != nil) != (len(plan.Problems) > 0):
		t.Fatalf("the plan's problems %q, the build's error %v: want both or neither", plan.Problems, err)
	case err != nil:
		return
	}
	g := k.Current()
	if got, want := publishedChains(g), predictedChains(plan); !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("interceptors: run publishes %q, plan predicts %q", got, want)
	}
	if got, want := publishedOwners(g), predictedOwners(plan); !maps.Equal(got, want) {
		t.Errorf("slots: run publishes %q, plan predicts %q", got, want)
	}
	if got, want := notRunning(g), predictedLeftOut(plan); !slices.Equal(got, want) {
		t.Errorf("left out: run leaves out %q, plan predicts %q (plan warnings %q, generation warnings %q)", got, want, plan.Warnings, g.Warnings())
	}
}

func publishedChains(g *generation.Generation) map[string][]string {
	out := map[string][]string{}
	for _, pt := range planRunPoints {
		for _, c := range g.Registry().Interceptors(contribution.Point(pt)) {
			out[pt] = append(out[pt], c.Source.Plugin)
		}
	}
	return out
}

func predictedChains(p *generation.Plan) map[string][]string {
	out := map[string][]string{}
	for _, d := range p.Interceptors {
		if len(d.After) > 0 {
			out[d.Point] = d.After
		}
	}
	return out
}

func publishedOwners(g *generation.Generation) map[string]string {
	out := map[string]string{}
	for _, sl := range planRunSlots {
		if c, ok := g.Registry().SlotOwner(contribution.Slot(sl)); ok {
			out[sl] = c.Source.Plugin
		}
	}
	return out
}

func predictedOwners(p *generation.Plan) map[string]string {
	out := map[string]string{}
	for _, d := range p.Slots {
		if d.After != "" {
			out[d.Slot] = d.After
		}
	}
	return out
}

func notRunning(g *generation.Generation) []string {
	var out []string
	for _, m := range g.Members() {
		if m.Status != generation.StatusRunning {
			out = append(out, m.Package.Name)
		}
	}
	return out
}

// leftOutWarning is how a plan names an optional plugin that would not run.
var leftOutWarning = regexp.MustCompile(`^optional plugin "([^"]+)" (would|will) be left out`)

func predictedLeftOut(p *generation.Plan) []string {
	var out []string
	for _, w := range p.Warnings {
		if m := leftOutWarning.FindStringSubmatch(w); m != nil && !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}
