package pluginpkg

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/extkernel/extkernel/internal/jsonfile"
)

// hostPlatform is the platform whose command Parse selects: GOOS/GOARCH
// of this build. Tests replace it to act as another host.
var hostPlatform = runtime.GOOS + "/" + runtime.GOARCH

// HostPlatform returns the platform this build runs on, as
// runtime.platforms names it ("linux/amd64"): the key whose command Parse
// selects as Runtime.Command.
func HostPlatform() string { return hostPlatform }

// knownOS and knownArch are the GOOS and GOARCH values of `go tool dist
// list`, which a platform key of runtime.platforms must use.
var (
	knownOS = []string{"aix", "android", "darwin", "dragonfly", "freebsd", "illumos", "ios", "js",
		"linux", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows"}
	knownArch = []string{"386", "amd64", "arm", "arm64", "loong64", "mips", "mips64", "mips64le",
		"mipsle", "ppc64", "ppc64le", "riscv64", "s390x", "wasm"}
)

// checkPlatform checks a key of runtime.platforms: "os/arch", each a Go
// GOOS and GOARCH value ("linux/amd64", "darwin/arm64").
func checkPlatform(key string) string {
	goos, goarch, ok := strings.Cut(key, "/")
	switch {
	case !ok || strings.Contains(goarch, "/"):
		return fmt.Sprintf("platform %q must be os/arch, such as \"linux/amd64\"", key)
	case !slices.Contains(knownOS, goos):
		return fmt.Sprintf("platform %q: unknown os %q%s", key, goos, closest(goos, knownOS))
	case !slices.Contains(knownArch, goarch):
		return fmt.Sprintf("platform %q: unknown arch %q%s", key, goarch, closest(goarch, knownArch))
	}
	return ""
}

// closest returns ` (did you mean "x"?)` for the word of words nearest to
// s when it is near enough to be a typo, else "".
func closest(s string, words []string) string {
	best, bestDist := "", 3
	for _, w := range words {
		if d := editDistance(s, w); d < bestDist {
			best, bestDist = w, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// platforms walks runtime.platforms: an object mapping each platform
// (checkPlatform) to the command run there, under runtime.command's
// rules. It returns the valid entries, nil for none.
func (p *manifestParser) platforms(f fieldPath, n *jsonfile.Node) map[string]string {
	if n.Kind != jsonfile.KindObject {
		p.typeError(f, "an object of strings", n)
		return nil
	}
	if len(n.Members) == 0 {
		p.add(f, "must name at least one platform (omit it to run runtime.command everywhere)")
		return nil
	}
	out := map[string]string{}
	for _, m := range n.Members {
		kf := f.child(m.Key)
		if p.badKey(kf, m) || p.duplicate(kf, n, m) {
			continue
		}
		if msg := checkPlatform(m.Key); msg != "" {
			p.add(kf, "%s", msg)
			continue
		}
		if s, ok := p.str(kf, m.Val); ok {
			p.rule(kf, checkCommand(s))
			out[m.Key] = s
		}
	}
	return out
}

// selectCommand sets rt.Command to the command this host runs: the
// platforms entry for hostPlatform, else runtime.command as written
// (DefaultCommand), else "" (the package cannot run here).
func (rt *Runtime) selectCommand() {
	rt.Command = rt.DefaultCommand
	if c, ok := rt.Platforms[hostPlatform]; ok {
		rt.Command = c
	}
}

// CommandFor returns the command the runtime runs on platform (as
// HostPlatform names it): its runtime.platforms entry, else
// runtime.command, else "" when it has none for platform.
func (rt *Runtime) CommandFor(platform string) string {
	if c, ok := rt.Platforms[platform]; ok {
		return c
	}
	if len(rt.Platforms) == 0 {
		return rt.Command
	}
	return rt.DefaultCommand
}

// NoPlatform returns why the runtime cannot run on this host, or "" when
// it can: its runtime.platforms has no entry for HostPlatform and it has
// no runtime.command to fall back to. The sentence names the platforms it
// has.
func (rt *Runtime) NoPlatform() string {
	if rt == nil || rt.Command != "" || len(rt.Platforms) == 0 {
		return ""
	}
	return fmt.Sprintf("no command for this host's platform %s: runtime.platforms has %s and there is no runtime.command to fall back to",
		hostPlatform, strings.Join(slices.Sorted(maps.Keys(rt.Platforms)), ", "))
}

// validatePlatforms checks a Runtime built in code: each platform and its
// command, and that it has a command somewhere.
func (rt *Runtime) validatePlatforms(f fieldPath, rule func(fieldPath, string)) {
	if len(rt.Platforms) == 0 {
		rule(f.child("command"), checkCommand(rt.Command))
		return
	}
	for _, k := range slices.Sorted(maps.Keys(rt.Platforms)) {
		rule(f.child("platforms").child(k), checkPlatform(k))
		rule(f.child("platforms").child(k), checkCommand(rt.Platforms[k]))
	}
	if rt.DefaultCommand != "" {
		rule(f.child("command"), checkCommand(rt.DefaultCommand))
	}
}
