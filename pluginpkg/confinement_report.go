package pluginpkg

import "fmt"

// ConfinementReport says how a plugin is confined (its Confinement) and
// what the machine it runs on enforces of it (docs/security.md,
// "Confinement"): what sidecar.Client.Confinement and
// sidecar.PlanConfinement return.
type ConfinementReport struct {
	// Mode is the confinement applied: "require", "best-effort" or "off".
	Mode string
	// Requested is the manifest's permissions (the minimal set for a
	// package that declares none); Granted and Denied the host's
	// additions and removals; Effective the result, deny winning, its
	// paths absolute. Nil when Mode is "off".
	Requested, Granted, Denied, Effective *Permissions
	// Mechanism names what enforces it ("landlock ABI 7, seccomp,
	// no_new_privs"), LandlockABI the Landlock ABI found (0 for none).
	Mechanism   string
	LandlockABI int
	// Enforced says what is enforced, and by what; NotEnforced what is
	// not (under "require" the plugin did not start if it is not empty);
	// Notes the entries left out (a variable not set, a command not on
	// PATH).
	Enforced, NotEnforced, Notes []string
}

// String summarizes the report on one line.
func (r *ConfinementReport) String() string {
	switch {
	case r == nil || r.Mode == "" || r.Mode == ConfineOff:
		return ConfineOff
	case len(r.NotEnforced) == 0:
		return fmt.Sprintf("%s: %s", r.Mode, r.Mechanism)
	}
	return fmt.Sprintf("%s: %s; %d rule(s) not enforced", r.Mode, r.Mechanism, len(r.NotEnforced))
}
