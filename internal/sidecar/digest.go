package sidecar

import (
	"strings"

	"github.com/extkernel/extkernel/pluginpkg"
)

// verifyPackage checks a package against its package pin: its files and
// resolved command, digested through pluginpkg's cache, so a restart reads
// only files that changed. A difference is a *PinMismatchError naming it.
func verifyPackage(p *pluginpkg.Package) error {
	c, err := p.CheckPackagePin()
	if err != nil {
		return err
	}
	if len(c.Changed) > 0 {
		return &PinMismatchError{Plugin: p.Name, Path: c.Command, Pinned: p.Pin, Actual: c.Actual, Changed: strings.Join(c.Changed, " and ")}
	}
	return nil
}
