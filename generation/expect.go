package generation

import (
	"fmt"
	"path"
	"strings"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Expected is a package the host requires whatever the home says: the
// build fails when it cannot be loaded, instead of leaving it out with a
// load warning. See Inputs.Expect.
type Expected struct {
	// Name is the package name (its directory name under packages/).
	Name string
	// Why says who requires it, for messages ("the host config requires
	// it").
	Why string
	// MayDisable honours an operator's explicit disable in the state file:
	// a disabled package is left out without failing the build. When false,
	// a disabled package fails the build like a missing one.
	MayDisable bool
}

// UnavailableError reports an expected package (Inputs.Expect) that cannot
// be part of the generation: it is not installed, it did not load, or it is
// disabled; or a package the kernel withholds (Inputs.Withheld, Err a
// *pluginpkg.PermissionsWidenedError). A *BuildError carries one per
// problem.
type UnavailableError struct {
	// Package is the package name.
	Package string
	// Path is the file or directory at fault, relative to the home
	// ("packages/p1/plugin.json", "packages/p1", "state.json").
	Path string
	// Reason says what is wrong with it.
	Reason string
	// why is Expected.Why, added to the message.
	why string
	// Err is the underlying error, if any (a *pluginpkg.ValidationError, a
	// file system error, or for a package withheld the
	// *pluginpkg.PermissionsWidenedError listing what its manifest asks
	// for beyond what the operator accepted).
	Err error
}

// Error is "required package "p1": path: reason; why", or for a package
// withheld "package "p1": path: reason".
func (e *UnavailableError) Error() string {
	if _, ok := e.Err.(*pluginpkg.PermissionsWidenedError); ok {
		return fmt.Sprintf("package %q: %s: %s", e.Package, e.Path, e.Reason)
	}
	s := fmt.Sprintf("required package %q: %s: %s", e.Package, e.Path, e.Reason)
	if e.why != "" {
		s += "; " + e.why
	}
	return s
}

// Unwrap returns the underlying error, or nil.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Unavailable checks in.Expect against in.Installed and returns one error
// per problem, in Expect order (each package's load warnings in document
// order): a build fails on them before anything starts, and a plan lists
// them as problems.
func (in *Inputs) Unavailable() []*UnavailableError {
	if len(in.Expect) == 0 {
		return nil
	}
	loaded := map[string]*pluginpkg.Package{}
	for _, p := range in.Installed.Packages {
		loaded[p.Name] = p
	}
	warned := map[string][]pluginpkg.Warning{}
	for _, w := range in.Installed.Warnings {
		warned[w.Package] = append(warned[w.Package], w)
	}
	var out []*UnavailableError
	for _, x := range in.Expect {
		p := loaded[x.Name]
		switch {
		case p != nil && p.Enabled:
		case p != nil && x.MayDisable:
		case p != nil:
			out = append(out, &UnavailableError{Package: x.Name, Path: pluginpkg.StateFile, why: x.Why,
				Reason: "disabled by the operator (enable it, or do not require it)"})
		case len(warned[x.Name]) > 0:
			for _, w := range warned[x.Name] {
				if w.Path == pluginpkg.StateFile {
					continue // a state entry for a package not installed
				}
				out = append(out, &UnavailableError{Package: x.Name, Path: w.Path, Reason: w.Message, why: x.Why, Err: w.Err})
			}
			if len(out) == 0 || out[len(out)-1].Package != x.Name {
				out = append(out, notInstalled(x))
			}
		default:
			out = append(out, notInstalled(x))
		}
	}
	return out
}

func notInstalled(x Expected) *UnavailableError {
	return &UnavailableError{Package: x.Name, Path: path.Join(pluginpkg.PackagesDir, x.Name), why: x.Why,
		Reason: "not installed (the package directory is missing)"}
}

// Withheld returns an *UnavailableError (its Err a
// *pluginpkg.PermissionsWidenedError) for each enabled
// package of in.Installed with a runtime that the kernel must not start
// although it loaded, in name order: one that runs confined (the
// Confinement.Mode of its launch value, LaunchOf, is not off) and whose
// manifest asks for permissions the operator has not accepted
// (pluginpkg.Package.WidenedPermissions; docs/security.md, "Consent").
// Unlike Unavailable's, these fail no build by themselves: a build leaves
// a member withheld out of the generation as a failed member, its Reason
// the error's, so a required one fails the build, an optional one is a
// warning, and what requires it cascades; a plan predicts the same.
func (in *Inputs) Withheld() []*UnavailableError {
	var out []*UnavailableError
	for _, p := range in.Installed.Packages {
		if !p.Enabled || p.Manifest.Runtime == nil {
			continue
		}
		if m := in.LaunchOf(p).Confinement.Mode; m == "" || m == pluginpkg.ConfineOff {
			continue
		}
		if added := p.WidenedPermissions(); len(added) > 0 {
			out = append(out, &UnavailableError{Package: p.Name, Path: p.ManifestPath,
				Err:    &pluginpkg.PermissionsWidenedError{Package: p.Name, To: p.Manifest.Version.String(), Added: added},
				Reason: "permissions widened: + " + strings.Join(added, "; + ") + " (not accepted by the operator)"})
		}
	}
	return out
}
