package generation

import (
	"fmt"
	"strings"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/pluginpkg"
)

// Inputs is everything a generation is built from, as data: the home as
// loaded, what the host provides and declares, and what it decides for
// each package. Installed is required; every other zero field means "none"
// or the documented default. NewPlan compares them with a snapshot; the
// kernel builds a generation from them.
type Inputs struct {
	// Number is the new generation's number.
	Number uint64
	// Installed is the home as loaded by pluginpkg.LoadInstalled.
	Installed *pluginpkg.Installed
	// Host lists the capabilities the host provides.
	Host []capability.Provided
	// Roots names the packages that must run; empty means every enabled
	// package.
	Roots []string
	// Spec declares the host's points and slots, strictness and slot owners.
	Spec contribution.HostSpec
	// Launch holds each package's launch value, by name: its policy,
	// config, environment and limits. A package without an entry gets
	// DefaultLaunch. Each member carries its value, and its fingerprint
	// hashes exactly that value (a change is "config changed").
	Launch map[string]Launch
	// Expect lists the packages the host requires whatever the home says
	// (a required policy in its config; at a reload, the required members
	// of the running generation). Each must have loaded and, unless its
	// MayDisable is set, be enabled; otherwise the build fails before
	// anything starts, with an *UnavailableError per problem naming the
	// package and the file (Unavailable). Launch decides the policy of
	// those that did load.
	Expect []Expected
	// KeepFailed maps package names to the reason each is not running, to
	// carry a failure over from the previous generation: the build does
	// not start them and records each as a failed (and Adopted) member
	// with that reason; failures cascade from them as from any failure,
	// and a required one fails the build. Names that are not members are
	// ignored. NewPlan classifies a down package named here as unchanged
	// unless it changed itself (see NewPlan).
	KeepFailed map[string]string
	// Kept maps package names to the load problems of their manifests
	// (each "path: field: message", joined by "; "): packages the
	// previous generation runs whose manifest no longer loads but which
	// are still installed and not disabled. Installed holds, under each
	// name, the previous generation's package value, so the member is
	// carried over at its running version: NewPlan classifies it as
	// unchanged (its one reason says why), nothing it depends on reloads
	// it, and the generation's and the plan's warnings say so. A plan
	// from a snapshot alone has no package value: NewPlan still calls it
	// unchanged, with its contributions and fingerprint as the snapshot
	// records them, but what requires it does not resolve. The kernel
	// fills Kept at a reload and a plan; names that are not members are
	// ignored.
	Kept map[string]string
	// Plan is the plan that led to this build, recorded in the
	// generation's snapshot; nil for a first generation.
	Plan *Plan
}

// LaunchOf returns the launch value of p: its entry in Launch, else
// DefaultLaunch(p).
func (in *Inputs) LaunchOf(p *pluginpkg.Package) Launch {
	if l, ok := in.Launch[p.Name]; ok {
		return l
	}
	return DefaultLaunch(p)
}

// BuildError reports a generation that could not be built. Every process
// the build started has been stopped. Problems lists every reason: root
// causes first, then their consequences (plugins aborted with the batch or
// failed along requires edges), each group sorted; the underlying typed
// errors (*UnavailableError, *contribution.RegistryError, a
// *protocol.VersionError, a *sidecar.StartError, ...) are in Errs and
// reachable with errors.As.
type BuildError struct {
	// Number is the generation's number.
	Number uint64
	// Problems lists every problem, as sentences.
	Problems []string
	// Errs holds the typed errors behind the problems.
	Errs []error
}

// Error lists every problem, one per line.
func (e *BuildError) Error() string {
	return fmt.Sprintf("generation %d: %d %s:\n\t%s", e.Number, len(e.Problems), plural(len(e.Problems), "problem", "problems"),
		strings.Join(e.Problems, "\n\t"))
}

// Unwrap returns Errs.
func (e *BuildError) Unwrap() []error { return e.Errs }

// keptReason says why a package of Inputs.Kept is carried over at its
// running version: a plan's reason for it and, after `plugin "name" `, a
// warning of the generation and of the plan.
func keptReason(version, problems string) string {
	return fmt.Sprintf("kept at its running version %s: its manifest no longer loads (%s); "+
		"fix the manifest and reload, or disable or remove the package to stop it", version, problems)
}

// LeftOut is the reason recorded for an optional plugin left out of a
// generation for breaking a contribution rule (rule, a sentence): a build
// records it as the member's Reason, and a plan predicts it with the same
// words.
func LeftOut(rule string) string {
	return "left out of the generation: " + strings.TrimSuffix(rule, ".")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
