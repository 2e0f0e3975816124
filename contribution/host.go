package contribution

import (
	"fmt"
	"maps"
	"slices"

	"github.com/extkernel/extkernel/internal/ident"
)

// checkHost validates the HostSpec and indexes its points, slots and kinds.
// Invalid declarations are reported as CodeHostSpec problems and left out.
func (s *build) checkHost() {
	s.points = make(map[Point]bool, len(s.host.Points))
	for i, p := range s.host.Points {
		if err := p.Validate(); err != nil {
			s.hostProblem(fmt.Sprintf("points[%d]", i), err.Error())
			continue
		}
		s.points[p] = true
	}
	s.slots = make(map[Slot]bool, len(s.host.Slots))
	for i, sl := range s.host.Slots {
		if err := sl.Validate(); err != nil {
			s.hostProblem(fmt.Sprintf("slots[%d]", i), err.Error())
			continue
		}
		s.slots[sl] = true
	}
	s.checkKinds()
	s.checkSlotOwners()
}

func (s *build) hostProblem(field, msg string) {
	s.report(Problem{Severity: Error, Code: CodeHostSpec, Message: "host spec: " + field + ": " + msg})
}

// checkKinds indexes the accepted kinds. A built-in kind must keep its
// built-in policy and target; a kind may be declared once.
func (s *build) checkKinds() {
	specs := s.host.Kinds
	if specs == nil {
		specs = builtinKinds[:]
	}
	s.kinds = make(map[Kind]KindSpec, len(specs))
	for i, k := range specs {
		field := fmt.Sprintf("kinds[%d]", i)
		if msg := checkKindSpec(k); msg != "" {
			s.hostProblem(field, msg)
			continue
		}
		if _, dup := s.kinds[k.Kind]; dup {
			s.hostProblem(field, fmt.Sprintf("kind %q is declared more than once", k.Kind))
			continue
		}
		s.kinds[k.Kind] = k
	}
}

func checkKindSpec(k KindSpec) string {
	if err := ident.ValidateDotted("kind", string(k.Kind)); err != nil {
		return err.Error()
	}
	if k.Policy < Ordered || k.Policy > Unique {
		return fmt.Sprintf("kind %q: policy %v is not Ordered, Exclusive or Unique", k.Kind, k.Policy)
	}
	if k.Target < TargetNone || k.Target > TargetSlot {
		return fmt.Sprintf("kind %q: target %v is not TargetNone, TargetPoint or TargetSlot", k.Kind, k.Target)
	}
	if b, ok := builtinSpec(k.Kind); ok && b != k {
		return fmt.Sprintf("kind %q is built in with policy %v and target %v; it cannot be redeclared with policy %v and target %v",
			k.Kind, b.Policy, b.Target, k.Policy, k.Target)
	}
	return ""
}

// checkSlotOwners checks that every slot_owners entry names a declared slot
// and a plugin. Whether the owner claims the slot is checked in resolve.
func (s *build) checkSlotOwners() {
	for _, sl := range slices.Sorted(maps.Keys(s.host.SlotOwners)) {
		owner := s.host.SlotOwners[sl]
		field := fmt.Sprintf("slot_owners[%q]", sl)
		switch err := sl.Validate(); {
		case err != nil:
			s.hostProblem(field, err.Error())
		case owner == "":
			s.hostProblem(field, "the owner's plugin name must not be empty")
		case !s.slots[sl]:
			s.report(Problem{
				Severity: s.lenient(), Code: CodeUnknownTarget, Kind: KindStrategy, Key: string(sl),
				Message: fmt.Sprintf("the host config's slot_owners names %q as owner of slot %q, which the host does not declare; add it to slots or remove the entry", owner, sl),
			})
		}
	}
}
