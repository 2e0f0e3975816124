package pluginpkg

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// MinimalPermissions returns the permissions of a package whose manifest
// declares none: its package read, ${data} and ${tmp} written, no
// network, no exec. Each call returns a new value.
func MinimalPermissions() *Permissions {
	return &Permissions{Read: []string{"${package}"}, Write: []string{"${data}", "${tmp}"}}
}

// RequestedPermissions returns what m asks for when it runs confined: a
// copy of its Permissions, or MinimalPermissions when it declares none.
func (m *Manifest) RequestedPermissions() *Permissions {
	if m.Permissions == nil {
		return MinimalPermissions()
	}
	return m.Permissions.Clone()
}

// Widening returns the entries of p that accepted does not cover, each
// as its list and the entry ("fs.read /etc/gitconfig", "net.connect
// api.example.com:443", "exec git"), in schema order (fs.read, fs.write,
// net.connect, exec) and list order; nil when accepted covers all of p. A
// nil p asks for nothing; a nil accepted covers nothing.
//
// An entry is covered when accepted allows at least as much:
//
//   - a path by an accepted path equal to it or above it: an fs.read
//     entry by one of fs.read or fs.write (writing includes reading), an
//     fs.write entry by one of fs.write. Paths compare as written: a
//     variable covers only entries that start with the same variable.
//   - a net.connect address by the same address (its host compared
//     without regard to case) or by "*" on its port: "*:443" covers
//     "api.example.com:443".
//   - an exec entry by the same entry.
//
// Widening never fails: entries are compared as Validate accepts them.
func (p *Permissions) Widening(accepted *Permissions) []string {
	if p == nil {
		return nil
	}
	if accepted == nil {
		accepted = &Permissions{}
	}
	var out []string
	add := func(list string, entries []string, covered func(string) bool) {
		for _, e := range entries {
			if !covered(e) {
				out = append(out, list+" "+e)
			}
		}
	}
	add("fs.read", p.Read, func(e string) bool {
		return pathCovered(e, accepted.Read) || pathCovered(e, accepted.Write)
	})
	add("fs.write", p.Write, func(e string) bool { return pathCovered(e, accepted.Write) })
	add("net.connect", p.Connect, func(e string) bool { return addressCovered(e, accepted.Connect) })
	add("exec", p.Exec, func(e string) bool {
		for _, a := range accepted.Exec {
			if a == e {
				return true
			}
		}
		return false
	})
	return out
}

// pathCovered reports whether one of list is p or a directory above it.
func pathCovered(p string, list []string) bool {
	for _, a := range list {
		if p == a || strings.HasPrefix(p, strings.TrimSuffix(a, "/")+"/") {
			return true
		}
	}
	return false
}

// addressCovered reports whether one of list names the address a or
// "*" on its port.
func addressCovered(a string, list []string) bool {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return false
	}
	for _, x := range list {
		h, p, err := net.SplitHostPort(x)
		if err == nil && p == port && (h == "*" || strings.EqualFold(h, host)) {
			return true
		}
	}
	return false
}

// WidenedPermissions returns what p's manifest asks for beyond what the
// operator accepted (Package.Accepted), as Permissions.Widening words
// each entry; nil when Accepted covers it, or when no acceptance is
// recorded (a package installed before extkernel recorded one counts as
// having accepted what it asks for now).
func (p *Package) WidenedPermissions() []string {
	if p.Accepted == nil || p.Manifest == nil {
		return nil
	}
	return p.Manifest.RequestedPermissions().Widening(p.Accepted)
}

// PermissionsWidenedError is returned by InstallSource and PreviewInstall
// for an upgrade whose new manifest asks for permissions the operator has
// not accepted (Permissions.Widening of the accepted ones), unless
// InstallOptions.AcceptPermissions is set. Nothing was written.
type PermissionsWidenedError struct {
	// Package is the package's name; From and To the installed version
	// ("" when it does not load) and the new one.
	Package, From, To string
	// Added lists each permission asked for and not accepted
	// ("net.connect api.example.com:443"), as Permissions.Widening does.
	Added []string
}

// Error is `package "p": version 1.1.0 asks for permissions not accepted:
// + net.connect api.example.com:443; + exec git`.
func (e *PermissionsWidenedError) Error() string {
	return fmt.Sprintf("package %q: version %s asks for permissions not accepted: + %s", e.Package, e.To,
		strings.Join(e.Added, "; + "))
}

// AcceptPermissions records that the operator accepts what the installed
// package name asks for now (Manifest.RequestedPermissions) as its
// accepted permissions in the state file, under the home lock. It
// returns what that accepts beyond what was accepted before (nil when
// nothing: the record is written all the same, so that a package
// installed before acceptances were recorded gets one). It returns an
// error wrapping ErrNotInstalled when home has no package of that name,
// and one naming each problem when its manifest does not load.
func AcceptPermissions(home, name string) ([]string, error) {
	var asked *Permissions
	var added []string
	err := updateEntryChecked(home, name, func(home string, e stateEntry) error {
		p, warns := loadPackage(home, name, loadOpts{})
		if p == nil {
			errs := []error{fmt.Errorf("accept permissions of %s: the package does not load", name)}
			for _, w := range warns {
				errs = append(errs, errors.New(w.String()))
			}
			return errors.Join(errs...)
		}
		asked = p.Manifest.RequestedPermissions()
		if e.Accepted != nil {
			added = asked.Widening(e.Accepted)
		}
		return nil
	}, func(e *stateEntry) { e.Accepted = asked })
	return added, err
}
