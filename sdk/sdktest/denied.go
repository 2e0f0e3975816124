package sdktest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/extkernel/extkernel/pluginpkg"
)

// The shapes a denial takes in what a confined plugin writes or answers,
// in each SDK's language, from its error's text:
//
//	Go       open /x: permission denied; fork/exec /bin/sh: operation not permitted
//	         dial tcp 1.2.3.4:443: connect: permission denied (socket: ... without net)
//	         listen tcp 127.0.0.1:0: bind: permission denied
//	Python   PermissionError: [Errno 13] Permission denied: '/x'
//	         [Errno 1] Operation not permitted (a socket most often: no address named)
//	Node.js  EACCES: permission denied, open '/x'; EPERM: operation not permitted, mkdir '/x'
//	         connect EPERM 1.2.3.4:443; spawn /bin/sh EACCES; spawnSync /bin/sh EACCES
//	C, shell cat: /x: Permission denied; sh: 1: /x: Permission denied (strerror's text,
//	         which a script or a program the plugin runs writes)
var (
	goPathDenied   = regexp.MustCompile(`\b(open|openat|stat|lstat|readlink|chdir|mkdir|mkdirat|remove|unlinkat|rename|renameat|truncate|chmod|symlink|link|fork/exec|exec) ((?:[^:\s]|:[^ \n])(?:[^:\n]|:[^ \n])*?): (?:permission denied|operation not permitted)`)
	goNetDenied    = regexp.MustCompile(`\b(dial|listen) (tcp[46]?|udp[46]?) (\S+?): (?:connect|socket|bind|listen): (?:permission denied|operation not permitted)`)
	pyDenied       = regexp.MustCompile(`\[Errno (?:1|13)\] (?:Permission denied|Operation not permitted)(?:: '([^'\n]*)')?`)
	nodePathDenied = regexp.MustCompile(`\b(?:EACCES|EPERM): (?:permission denied|operation not permitted), (\w+) '([^'\n]*)'`)
	nodeNetDenied  = regexp.MustCompile(`\b(connect|listen|bind) (?:EACCES|EPERM) (\S+)`)
	nodeSpawn      = regexp.MustCompile(`\bspawn(?:Sync)? (\S+) (?:EACCES|EPERM)\b`)
	cDenied        = regexp.MustCompile(`(?:^|[\s:])'?(/[^'\n:]*)'?: (?:Permission denied|Operation not permitted)\b`)
)

// The operations a denial is of.
const (
	opRead    = "read"
	opWrite   = "write"
	opExec    = "exec"
	opOpen    = "open" // read or write: the error does not say
	opConnect = "connect"
	opListen  = "listen"
)

// pathOps maps the operation an error names to what it needs.
var pathOps = map[string]string{
	"open": opOpen, "openat": opOpen, "stat": opRead, "lstat": opRead, "readlink": opRead, "chdir": opRead,
	"scandir": opRead, "opendir": opRead, "access": opRead, "mkdir": opWrite, "mkdirat": opWrite, "remove": opWrite,
	"unlink": opWrite, "unlinkat": opWrite, "rmdir": opWrite, "rename": opWrite, "renameat": opWrite,
	"truncate": opWrite, "chmod": opWrite, "symlink": opWrite, "link": opWrite, "copyfile": opWrite,
	"fork/exec": opExec, "exec": opExec,
}

// denial is one denial found in a text: what was done, and to what.
type denial struct {
	op, target string // target: a path, an address, or "" when the error names none
}

// findDenials returns the denials text shows, in the order found.
func findDenials(text string) []denial {
	var out []denial
	for _, m := range goPathDenied.FindAllStringSubmatch(text, -1) {
		out = append(out, denial{op: pathOps[m[1]], target: m[2]})
	}
	for _, m := range goNetDenied.FindAllStringSubmatch(text, -1) {
		op := opConnect
		if m[1] == "listen" {
			op = opListen
		}
		out = append(out, denial{op: op, target: m[3]})
	}
	for _, m := range pyDenied.FindAllStringSubmatch(text, -1) {
		if m[1] != "" {
			out = append(out, denial{op: opOpen, target: m[1]})
		} else {
			out = append(out, denial{op: opConnect})
		}
	}
	for _, m := range nodePathDenied.FindAllStringSubmatch(text, -1) {
		op, ok := pathOps[strings.ToLower(m[1])]
		if !ok {
			op = opOpen
		}
		out = append(out, denial{op: op, target: m[2]})
	}
	for _, m := range nodeNetDenied.FindAllStringSubmatch(text, -1) {
		op := opConnect
		if m[1] != "connect" {
			op = opListen
		}
		out = append(out, denial{op: op, target: m[2]})
	}
	for _, m := range nodeSpawn.FindAllStringSubmatch(text, -1) {
		out = append(out, denial{op: opExec, target: m[1]})
	}
	for _, m := range cDenied.FindAllStringSubmatch(text, -1) {
		out = append(out, denial{op: opOpen, target: m[1]})
	}
	return out
}

// maxDenials bounds the denials a run keeps.
const maxDenials = 16

// denials finds the denials in what a confined plugin writes on stderr
// and answers, and says each against its effective permissions: "denied:
// read /x (not in permissions.fs.read)". A denial the permissions cover
// (a file whose own mode refused it, not the confinement) is not one.
// It is safe for concurrent use.
type denials struct {
	eff *pluginpkg.Permissions // the effective permissions, paths absolute
	dir string                 // the package directory: the plugin's working directory, always readable
	// system is what the confinement lets every plugin read beyond its
	// permissions (system libraries, its interpreter, the programs it may
	// run): a refusal there is the file's own mode, not a denial.
	system []string

	mu   sync.Mutex
	seen []string // said, in the order found, at most maxDenials
}

// scan returns what text shows the plugin was denied, each said once per
// text, and records them for the run.
func (d *denials) scan(text string) []string {
	if d == nil || text == "" {
		return nil
	}
	var said []string
	for _, x := range findDenials(text) {
		if s := d.say(x); s != "" && !slices.Contains(said, s) {
			said = append(said, s)
		}
	}
	if len(said) > 0 {
		d.mu.Lock()
		for _, s := range said {
			if !slices.Contains(d.seen, s) && len(d.seen) < maxDenials {
				d.seen = append(d.seen, s)
			}
		}
		d.mu.Unlock()
	}
	return said
}

// all returns the denials of the run, sorted.
func (d *denials) all() []string {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := slices.Clone(d.seen)
	slices.Sort(out)
	return out
}

// say says one denial against the permissions, or "" when they cover it.
func (d *denials) say(x denial) string {
	switch x.op {
	case opConnect, opListen:
		return d.sayNet(x)
	case opExec:
		if d.coversExec(x.target) {
			return ""
		}
		return fmt.Sprintf("denied: exec %s (not in permissions.exec)", x.target)
	}
	p := x.target
	if !filepath.IsAbs(p) {
		p = filepath.Join(d.dir, p)
	}
	p = filepath.Clean(p)
	readable, writable := d.readable(p), covered(d.eff.Write, p)
	switch {
	case writable, x.op == opRead && readable, x.op != opWrite && !readable && covered(d.system, p):
		return ""
	case x.op == opWrite || readable:
		return fmt.Sprintf("denied: write %s (not in permissions.fs.write)", p)
	case x.op == opOpen && executable(p):
		return fmt.Sprintf("denied: read or exec %s (in neither permissions.fs.read nor permissions.exec)", p)
	}
	return fmt.Sprintf("denied: read %s (not in permissions.fs.read)", p)
}

// sayNet says a denied connection or listening socket.
func (d *denials) sayNet(x denial) string {
	switch {
	case x.op == opListen:
		return fmt.Sprintf("denied: listen %s (a confined plugin may not listen)", x.target)
	case x.target == "" && len(d.eff.Connect) == 0:
		return "denied: an operation the error does not name, most likely a network connection (permissions.net.connect is empty: no network)"
	case x.target == "":
		return fmt.Sprintf("denied: an operation the error does not name, maybe a connection outside permissions.net.connect (%s)", strings.Join(d.eff.Connect, ", "))
	case d.coversAddr(x.target):
		return ""
	}
	return fmt.Sprintf("denied: connect %s (not in permissions.net.connect)", x.target)
}

// readable reports whether the permissions let the plugin read p.
func (d *denials) readable(p string) bool {
	return covered(d.eff.Read, p) || covered(d.eff.Write, p) || covered([]string{d.dir}, p)
}

// covered reports whether p is one of dirs or beneath one.
func covered(dirs []string, p string) bool {
	for _, dir := range dirs {
		if p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/") {
			return true
		}
	}
	return false
}

// coversExec reports whether an exec entry names the program: its path,
// or its name for an entry looked up on PATH.
func (d *denials) coversExec(prog string) bool {
	return slices.Contains(d.eff.Exec, prog) || slices.Contains(d.eff.Exec, filepath.Base(prog)) && !strings.Contains(prog, "/")
}

// coversAddr reports whether a connect entry names addr: its host and
// port, or "*" and its port.
func (d *denials) coversAddr(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	for _, e := range d.eff.Connect {
		eh, ep, _ := net.SplitHostPort(e)
		if ep == port && (eh == "*" || eh == host) {
			return true
		}
	}
	return false
}

// executable reports whether p is a regular file someone may execute.
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}
