package pluginpkg

import (
	"fmt"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/extkernel/extkernel/internal/jsonfile"
)

// Permissions are what a package's plugin may reach when it runs confined
// (the manifest's "permissions", docs/manifest.md): files to read and
// write, TCP addresses to connect to, and programs to run beyond its own
// command. What every process needs to run (read-only system libraries,
// its interpreter, locale and CA files) is granted besides, by the host;
// nothing else is. Every entry is valid when Parse returned it: see
// CheckPath, CheckAddress and CheckExec.
type Permissions struct {
	// Read lists the file hierarchies the plugin may read ("fs.read"):
	// each an absolute path or one under a path variable (PathVariables),
	// cleaned.
	Read []string
	// Write lists the hierarchies it may write and read ("fs.write").
	Write []string
	// Connect lists the TCP addresses it may connect to ("net.connect"),
	// each "host:port", where host is a name, an IP address (IPv6 in
	// brackets) or "*" for any host. Empty means no network at all.
	Connect []string
	// Exec lists the programs it may run besides its own command
	// ("exec"): a command name looked up on the plugin's PATH, an
	// absolute path, or a path under ${package}.
	Exec []string
}

// PathVariables are the variables a permission path may start with, each
// standing for a directory the host chooses per plugin: the package's
// directory, its data directory, the session's workspace and a private
// temporary directory (also the plugin's TMPDIR).
var PathVariables = []string{"${package}", "${data}", "${workspace}", "${tmp}"}

// maxPermissionEntries bounds each list of a manifest's permissions.
const maxPermissionEntries = 64

// Empty reports whether p grants nothing beyond what every process needs.
func (p *Permissions) Empty() bool {
	return p == nil || len(p.Read)+len(p.Write)+len(p.Connect)+len(p.Exec) == 0
}

// Clone returns a deep copy of p; nil for nil.
func (p *Permissions) Clone() *Permissions {
	if p == nil {
		return nil
	}
	return &Permissions{Read: slices.Clone(p.Read), Write: slices.Clone(p.Write),
		Connect: slices.Clone(p.Connect), Exec: slices.Clone(p.Exec)}
}

// CheckPath checks a permission path: absolute or starting with one of
// PathVariables followed by "/" or nothing, clean (no "." or ".."
// element, no repeated or trailing "/"), UTF-8, without NUL or another
// "${". It returns "" or what is wrong.
func CheckPath(p string) string {
	rest := p
	switch {
	case p == "":
		return "must not be empty"
	case !utf8.ValidString(p):
		return notUTF8
	case strings.ContainsRune(p, 0):
		return "must not contain a NUL byte"
	case strings.HasPrefix(p, "${"):
		v, _, _ := strings.Cut(p, "}")
		v += "}"
		if !slices.Contains(PathVariables, v) {
			return fmt.Sprintf("unknown variable %q (known: %s)", v, strings.Join(PathVariables, ", "))
		}
		rest = p[len(v):]
		if rest != "" && rest[0] != '/' {
			return fmt.Sprintf("%s must be followed by \"/\" or nothing", v)
		}
		if rest == "" {
			return ""
		}
	case p[0] != '/':
		return fmt.Sprintf("must be absolute or start with one of %s", strings.Join(PathVariables, ", "))
	}
	if strings.Contains(rest, "${") {
		return "a variable may only start the path"
	}
	if slices.Contains(strings.Split(rest, "/"), "..") {
		return `must not contain a ".." element`
	}
	if c := path.Clean(rest); c != rest {
		return fmt.Sprintf("must be clean (%q)", p[:len(p)-len(rest)]+c)
	}
	return ""
}

// CheckAddress checks a net.connect entry: "host:port" with a port in
// 1..65535 and a host that is "*", an IP address (IPv6 in brackets) or a
// DNS name. It returns "" or what is wrong.
func CheckAddress(a string) string {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return fmt.Sprintf("must be \"host:port\": %v", strings.TrimPrefix(err.Error(), "address "+a+": "))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return fmt.Sprintf("port %q must be a number in 1..65535", port)
	}
	switch {
	case host == "*":
	case net.ParseIP(host) != nil:
		if strings.Contains(host, ":") != strings.HasPrefix(a, "[") {
			return "an IPv6 address must be in brackets"
		}
	case !validHostname(host):
		return fmt.Sprintf("host %q must be \"*\", an IP address or a DNS name", host)
	}
	return ""
}

// validHostname reports whether h is a DNS name: dot-separated labels of
// letters, digits and inner hyphens, each 1 to 63 bytes, 253 in all.
func validHostname(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// CheckExec checks an exec entry: a command name (no "/", of
// [A-Za-z0-9._+-], not "." or "..") or a path as CheckPath allows. It
// returns "" or what is wrong.
func CheckExec(e string) string {
	if strings.Contains(e, "/") {
		return CheckPath(e)
	}
	if e == "" || e == "." || e == ".." {
		return "must be a command name or a path"
	}
	for i := 0; i < len(e); i++ {
		c := e[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '+' || c == '-') {
			return fmt.Sprintf("command name %q may hold only letters, digits and . _ + -", e)
		}
	}
	return ""
}

// permissionLists are the lists of Permissions with their JSON field
// paths and checks, in schema order.
func (p *Permissions) lists() []struct {
	field fieldPath
	list  *[]string
	check func(string) string
} {
	return []struct {
		field fieldPath
		list  *[]string
		check func(string) string
	}{
		{"permissions.fs.read", &p.Read, CheckPath},
		{"permissions.fs.write", &p.Write, CheckPath},
		{"permissions.net.connect", &p.Connect, CheckAddress},
		{"permissions.exec", &p.Exec, CheckExec},
	}
}

// validate reports every invalid or duplicate entry of p, and lists
// longer than the bound.
func (p *Permissions) validate(v *validator) {
	for _, l := range p.lists() {
		if len(*l.list) > maxPermissionEntries {
			v.add(l.field, "lists %d entries, more than %d", len(*l.list), maxPermissionEntries)
		}
		seen := map[string]int{}
		for i, e := range *l.list {
			f := l.field.index(i)
			if msg := l.check(e); msg != "" {
				v.add(f, "%q: %s", e, msg)
			} else if at, dup := seen[e]; dup {
				v.add(f, "duplicate entry %q (already at [%d])", e, at)
			} else {
				seen[e] = i
			}
		}
	}
}

// permissions parses the manifest's "permissions" object.
func (p *manifestParser) permissions(f fieldPath, n *jsonfile.Node) {
	perms := &Permissions{}
	list := func(dst *[]string) func(fieldPath, *jsonfile.Node) {
		return func(f fieldPath, n *jsonfile.Node) {
			if s, ok := p.strings(f, n); ok {
				*dst = s
			}
		}
	}
	ok := p.object(f, n, []field{
		{name: "fs", check: func(f fieldPath, n *jsonfile.Node) {
			p.object(f, n, []field{{name: "read", check: list(&perms.Read)}, {name: "write", check: list(&perms.Write)}})
		}},
		{name: "net", check: func(f fieldPath, n *jsonfile.Node) {
			p.object(f, n, []field{{name: "connect", check: list(&perms.Connect)}})
		}},
		{name: "exec", check: list(&perms.Exec)},
	})
	if !ok {
		return
	}
	perms.validate(&p.validator)
	p.m.Permissions = perms
}

// Validate checks p as a manifest's "permissions" are checked, for
// permissions built in code or read from a host config. It returns nil or
// a *ValidationError whose field paths are relative to the permissions
// object ("fs.read[1]").
func (p *Permissions) Validate() error {
	if p == nil {
		return nil
	}
	v := &validator{}
	p.validate(v)
	if len(v.problems) == 0 {
		return nil
	}
	for i := range v.problems {
		v.problems[i].Field = strings.TrimPrefix(v.problems[i].Field, "permissions.")
	}
	return &ValidationError{Problems: v.problems}
}

// Confinement modes (Confinement.Mode).
const (
	ConfineRequire    = "require"
	ConfineBestEffort = "best-effort"
	ConfineOff        = "off"
)

// Confinement is how the host confines one package's plugin: its mode,
// and what it adds to and removes from the manifest's permissions. The
// host decides it (package kernel/config reads it from kernel.json's
// "confinement"); package sidecar applies it (docs/security.md).
type Confinement struct {
	// Mode is ConfineRequire (refuse to start a plugin whose rules this
	// machine cannot enforce), ConfineBestEffort (enforce what it can and
	// say what it cannot) or ConfineOff; "" is ConfineOff.
	Mode string
	// Grants are added to the manifest's permissions (or to the minimal
	// set of a package that declares none) and Denies removed from the
	// result: deny wins. Nil adds or removes nothing.
	Grants, Denies *Permissions
}

// CheckConfinementMode returns "" or what is wrong with a mode.
func CheckConfinementMode(m string) string {
	switch m {
	case "", ConfineRequire, ConfineBestEffort, ConfineOff:
		return ""
	}
	return fmt.Sprintf("unknown confinement %q (use %q, %q or %q)", m, ConfineRequire, ConfineBestEffort, ConfineOff)
}
