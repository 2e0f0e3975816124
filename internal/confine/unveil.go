package confine

import "strings"

// unveilRule is one unveil(2) call: a path and its permissions ("r",
// "rwc", "rx", "rw").
type unveilRule struct{ path, perms string }

// unveilRules returns the unveil(2) calls that confine a plugin's files to
// p on OpenBSD, in p's order: Read "r", Write "rwc", Exec "rx", Devices
// "rw". A path in several lists is unveiled once per list; unveil keeps
// the last permissions given, so the lists go from the narrowest to the
// widest (Read, Exec, Devices, Write).
func unveilRules(p *Policy) []unveilRule {
	var out []unveilRule
	for _, l := range []struct {
		paths []string
		perms string
	}{{p.Read, "r"}, {p.Exec, "rx"}, {p.Devices, "rw"}, {p.Write, "rwc"}} {
		for _, path := range l.paths {
			out = append(out, unveilRule{path, l.perms})
		}
	}
	return out
}

// pledgePromises returns the pledge(2) execpromises of a plugin confined
// to p on OpenBSD: the standard I/O and file promises every plugin needs
// (which unveil restricts to p's files), prot_exec for the runtimes that
// compile code (Node.js), inet with any network rule and dns with UDP,
// and proc and exec only when p lets the plugin start other programs
// (without proc a process signals no other process).
func pledgePromises(p *Policy) string {
	promises := []string{"stdio", "rpath", "wpath", "cpath", "dpath", "fattr", "flock", "prot_exec"}
	if len(p.TCPConnect) > 0 || p.UDP {
		promises = append(promises, "inet")
	}
	if p.UDP {
		promises = append(promises, "dns")
	}
	if p.Children {
		promises = append(promises, "proc", "exec")
	}
	return strings.Join(promises, " ")
}
