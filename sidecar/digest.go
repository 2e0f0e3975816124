package sidecar

import (
	"strings"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// verifyPackage checks a plugin against its package pin: its files and
// resolved command, digested through the process-wide cache of
// internal/pkgfiles, so a restart reads only files that changed. A
// difference is a *PinMismatchError naming it.
func verifyPackage(p *Plugin) error {
	c, err := pkgfiles.Ref{Name: p.Name, Dir: p.Dir, Command: p.Command}.CheckPackagePin(p.Pin)
	if err != nil {
		return err
	}
	if len(c.Changed) > 0 {
		return &PinMismatchError{Plugin: p.Name, Path: c.Command, Pinned: p.Pin, Actual: c.Actual, Changed: strings.Join(c.Changed, " and ")}
	}
	return nil
}
