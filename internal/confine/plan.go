package confine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/pluginpkg"
)

// Vars are the directories the permission variables stand for, absolute.
// An empty one leaves the entries that use it out, with a note.
type Vars struct {
	Package, Data, Workspace, Tmp string
}

// Spec is what Plan confines: one plugin's permissions and what it runs.
type Spec struct {
	// Mode is the plugin's confinement (pluginpkg.ConfineRequire, ...);
	// "" and pluginpkg.ConfineOff plan nothing.
	Mode string
	// Requested is the manifest's permissions; nil is the minimal set
	// (pluginpkg.MinimalPermissions): its package read, its data and
	// temporary directories written, no network, no exec.
	Requested *pluginpkg.Permissions
	// Grants are added to Requested, Denies removed from the result:
	// deny wins.
	Grants, Denies *pluginpkg.Permissions
	// Vars expand the variables of every entry.
	Vars Vars
	// Command is the absolute path of the executable the plugin runs
	// (its command resolved), and PATH the search path of its exec names.
	Command, PATH string
}

// Plan returns the Policy confining spec's plugin and the Report of what
// this machine enforces of it. Under pluginpkg.ConfineRequire, a rule the
// machine cannot enforce fails Plan with an *UnenforceableError; under
// pluginpkg.ConfineBestEffort it is left out of the Policy and named in
// the Report. Off, it returns a nil Policy and a Report saying so.
func Plan(spec Spec) (*Policy, *Report, error) {
	r := &Report{Mode: spec.Mode}
	if spec.Mode == pluginpkg.ConfineOff || spec.Mode == "" {
		r.Mode = pluginpkg.ConfineOff
		return nil, r, nil
	}
	req := spec.Requested
	if req == nil {
		req = pluginpkg.MinimalPermissions()
	}
	r.Requested, r.Granted, r.Denied = req.Clone(), spec.Grants.Clone(), spec.Denies.Clone()
	eff, notes, carved := effective(req, spec.Grants, spec.Denies, spec.Vars)
	r.Effective = eff
	r.Notes = append(r.Notes, notes...)
	r.NotEnforced = append(r.NotEnforced, carved...)
	p := &Policy{Read: slices.Clone(eff.Read), Write: slices.Clone(eff.Write)}
	p.Read = append(p.Read, spec.Vars.Package) // its own code: every plugin needs it
	p.Exec = execFiles(spec.Command, eff.Exec, spec.PATH, r)
	for _, f := range p.Exec {
		if h := interpreterHome(f); h != "" {
			p.Read = append(p.Read, h)
		}
	}
	p.Read = append(p.Read, systemReadable()...)
	p.Devices = systemDevices()
	planNet(p, eff.Connect, r)
	p.normalize()
	enforce(p, r)
	if spec.Mode == pluginpkg.ConfineRequire && len(r.NotEnforced) > 0 {
		return nil, r, &UnenforceableError{Missing: r.NotEnforced}
	}
	return p, r, nil
}

// Error is Start's failure to confine the thread the plugin is forked
// from: nothing was started.
type Error struct {
	Err error
}

func (e *Error) Error() string { return "confine: " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// UnenforceableError is Plan's failure under pluginpkg.ConfineRequire: the rules this
// machine cannot enforce, each saying what is missing.
type UnenforceableError struct {
	Missing []string
}

func (e *UnenforceableError) Error() string {
	return "confinement required but not enforceable on this machine: " + strings.Join(e.Missing, "; ")
}

// effective expands and merges the permissions: req and grants, less
// denies. A deny removes an entry it names or one beneath it; a deny
// strictly inside a granted hierarchy cannot be carved out of it (the
// mechanisms grant whole hierarchies), which a note says and enforce
// reports as not enforced.
func effective(req, grants, denies *pluginpkg.Permissions, vars Vars) (eff *pluginpkg.Permissions, notes, carved []string) {
	expand := func(list []string) []string {
		var out []string
		for _, e := range list {
			x, ok := expandVar(e, vars)
			if !ok {
				notes = append(notes, fmt.Sprintf("%s: left out, the variable is not set for this plugin", e))
				continue
			}
			out = append(out, x)
		}
		return out
	}
	eff = &pluginpkg.Permissions{}
	for _, p := range []*pluginpkg.Permissions{req, grants} {
		if p == nil {
			continue
		}
		eff.Read = append(eff.Read, expand(p.Read)...)
		eff.Write = append(eff.Write, expand(p.Write)...)
		eff.Connect = append(eff.Connect, p.Connect...)
		eff.Exec = append(eff.Exec, expand(p.Exec)...)
	}
	if denies != nil {
		dread, dwrite := expand(denies.Read), expand(denies.Write)
		for _, d := range dread {
			eff.Read, eff.Write = removePath(eff.Read, d), removePath(eff.Write, d)
		}
		for _, d := range dwrite {
			eff.Write = removePath(eff.Write, d)
		}
		carved = append(carveOuts(eff.Read, dread), carveOuts(eff.Write, dwrite)...)
		eff.Connect = slices.DeleteFunc(eff.Connect, func(a string) bool { return addressDenied(a, denies.Connect) })
		dexec := expand(denies.Exec)
		eff.Exec = slices.DeleteFunc(eff.Exec, func(e string) bool { return slices.Contains(dexec, e) })
	}
	for _, l := range []*[]string{&eff.Read, &eff.Write, &eff.Connect, &eff.Exec} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return eff, notes, carved
}

// expandVar replaces a leading variable of a permission path by its
// directory; false when that directory is not set.
func expandVar(e string, vars Vars) (string, bool) {
	for name, dir := range map[string]string{"${package}": vars.Package, "${data}": vars.Data,
		"${workspace}": vars.Workspace, "${tmp}": vars.Tmp} {
		if rest, ok := strings.CutPrefix(e, name); ok {
			if dir == "" {
				return "", false
			}
			return dir + rest, true
		}
	}
	return e, true
}

// removePath removes from list the paths at or beneath d.
func removePath(list []string, d string) []string {
	return slices.DeleteFunc(list, func(p string) bool { return within(p, d) })
}

// within reports whether p is d or beneath it.
func within(p, d string) bool {
	return p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/")
}

// addressDenied reports whether a connect entry is denied: a deny names it,
// or its port with the host "*".
func addressDenied(a string, denies []string) bool {
	_, port, _ := net.SplitHostPort(a)
	for _, d := range denies {
		dh, dp, _ := net.SplitHostPort(d)
		if d == a || dh == "*" && dp == port {
			return true
		}
	}
	return false
}

// carveOuts returns the denies that lie strictly inside a hierarchy
// granted still: ones no mechanism can enforce.
func carveOuts(granted, denies []string) []string {
	var out []string
	for _, d := range denies {
		for _, g := range granted {
			if d != g && within(d, g) {
				out = append(out, fmt.Sprintf("deny of %s inside the granted %s (grants cover whole hierarchies)", d, g))
			}
		}
	}
	return out
}

// execFiles resolves the files the plugin may execute: its command, the
// interpreter chain of every file (a "#!" line, an ELF interpreter) and
// the exec entries (names looked up on PATH). What cannot be resolved is
// noted and left out.
func execFiles(command string, entries []string, path string, r *Report) []string {
	files := []string{command}
	for _, e := range entries {
		if !strings.Contains(e, "/") {
			found, err := lookPath(e, path)
			if err != nil {
				r.Notes = append(r.Notes, fmt.Sprintf("exec %s: not found on PATH, left out", e))
				continue
			}
			e = found
		}
		files = append(files, e)
	}
	var out []string
	for _, f := range files {
		chain, err := interpreters(f, path)
		if err != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("exec %s: %v", f, err))
		}
		out = append(out, chain...)
	}
	return out
}

// lookPath finds a command name on path, as the plugin's exec would.
func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New("not found")
}

// planNet turns the connect entries into TCP ports, and into DNS (UDP and
// TCP port 53) when one names a host (docs/manifest.md: "An entry naming a
// host also allows DNS"); "*" and an IP address name none. Landlock
// restricts ports, not hosts: an entry naming a host or an address is
// enforced as its port unless a "*" entry for the same port makes that
// exact.
func planNet(p *Policy, connect []string, r *Report) {
	wild, dns := map[int]bool{}, false
	for _, a := range connect {
		h, port, _ := net.SplitHostPort(a)
		if h == "*" {
			n, _ := strconv.Atoi(port)
			wild[n] = true
		}
		dns = dns || h != "*" && net.ParseIP(h) == nil
	}
	if dns { // a name to resolve: DNS over UDP and TCP, port 53
		p.UDP, p.UDPPorts = true, []uint16{53}
		p.TCPConnect = append(p.TCPConnect, 53)
	}
	for _, a := range connect {
		h, port, _ := net.SplitHostPort(a)
		n, _ := strconv.Atoi(port)
		p.TCPConnect = append(p.TCPConnect, uint16(n))
		if h != "*" && !wild[n] {
			r.hostOnly = append(r.hostOnly, fmt.Sprintf("connect %s: any host on port %d is reachable (Landlock restricts ports, not hosts; grant \"*:%d\" to accept that)", a, n, n))
		}
	}
}
