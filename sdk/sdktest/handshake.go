package sdktest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// hostName is the host the suite says it is in initialize.
const hostName = "extkernel-conformance"

// handshakeTimeout returns the bound of initialize and where it comes from.
func (r *runner) handshakeTimeout() (time.Duration, string) {
	d, source := wire.DefaultHandshakeTimeout, "the default handshake timeout"
	if rt := r.pkg.Manifest.Runtime; rt.HandshakeTimeout > 0 {
		d, source = rt.HandshakeTimeout, "runtime.handshake_timeout"
	}
	if r.opts.HandshakeTimeout > 0 {
		d, source = r.opts.HandshakeTimeout, "the suite's handshake timeout"
	}
	return min(d, wire.MaxHandshakeTimeout), source
}

// start starts the plugin and runs the handshake. With record, the result
// is the handshake case; without, a failed handshake is returned as the
// reason of the caller's case. It returns the session (nil when nothing
// started) and the answer when the handshake passed. Its error is ctx's.
func (r *runner) start(record bool) (*session, *protocol.InitializeResult, error) {
	s, res, v, err := r.startAndGreet()
	if err != nil {
		return s, nil, err
	}
	c := v.result(caseHandshake, "")
	if res != nil {
		c.Reason = fmt.Sprintf("answered initialize with protocol %s%s", res.ProtocolVersion, announcedFeatures(res))
		if len(v.warns) > 0 {
			c.Reason = strings.Join(v.warns, "; ")
		}
	}
	if record {
		r.add(c)
	} else if c.Status == Fail {
		r.add(Case{Name: caseMalformed, Status: Skip, Reason: "the second start of the plugin failed its handshake: " + c.Reason})
	}
	if c.Status == Fail {
		return s, nil, nil
	}
	return s, res, nil
}

// startAndGreet spawns the plugin and sends initialize.
func (r *runner) startAndGreet() (*session, *protocol.InitializeResult, verdict, error) {
	var v verdict
	s, err := startSession(r.pkg, r.command, r.env(), r.launch())
	if s != nil {
		s.host = newStubHost(r.pkg)
	}
	if err != nil {
		v.fail("start %s: %v", r.pkg.Manifest.Runtime.Command, err)
		return nil, nil, v, nil
	}
	r.sessions = append(r.sessions, s)
	d, source := r.handshakeTimeout()
	params := protocol.InitializeParams{
		ProtocolVersion: protocol.Version,
		Host:            protocol.HostInfo{Name: hostName, Version: protocol.Version},
		Plugin:          protocol.PluginInfo{Name: r.pkg.Name, Version: r.pkg.Manifest.Version.String(), DataDir: r.dataDir},
		Config:          r.opts.Config,
		Session:         r.opts.Session,
		Features:        wire.AllFeatures.Names(), // as the kernel: every feature (§4.6)
	}
	key, ch, err := s.request(wire.MethodInitialize, params)
	if err != nil {
		// A plugin that exits at once (bad config, say) closes its stdin
		// before initialize is written: say that it exited and what it
		// said, as when it exits after reading initialize.
		if exited, _ := s.waitExit(r.ctx, 200*time.Millisecond); exited {
			v.fail("%s", s.notAnswered("initialize", d))
		} else {
			v.fail("send initialize: %v%s", err, s.why())
		}
		return s, nil, v, nil
	}
	a, ok, err := s.await(r.ctx, ch, time.Now().Add(d))
	if err != nil {
		return s, nil, v, err
	}
	for _, e := range s.earlyMessages() {
		v.fail("sent a %s before answering initialize; the plugin MUST NOT send anything before (§3)", e)
	}
	if !ok {
		s.abandon(key)
		v.fail("%s", s.notAnswered("initialize", d))
		if !s.gone() {
			v.fails[len(v.fails)-1] += " (" + source + ")"
		}
		return s, nil, v, nil
	}
	res := checkInitAnswer(&v, a.m, key)
	return s, res, v, nil
}

// checkInitAnswer checks the answer to initialize (§4.3) and returns the
// result when it is one.
func checkInitAnswer(v *verdict, m *wire.Message, key string) *protocol.InitializeResult {
	if got := idKey(m.ID); got != key {
		if len(got) > 40 {
			got = got[:40] + "..."
		}
		v.fail("initialize answered id %s; expected %s (§4.3)", got, key)
		return nil
	}
	if m.Error != nil {
		v.fail("initialize answered error %d: %s (§4.3)", m.Error.Code, quoteLimited(m.Error.Message, 120))
		return nil
	}
	res := new(protocol.InitializeResult)
	if err := json.Unmarshal(m.Result, res); err != nil {
		v.fail("initialize result: %v (§4.2)", err)
		return nil
	}
	checkProtocolVersion(v, res.ProtocolVersion)
	if !v.ok() {
		return nil
	}
	return res
}

// checkProtocolVersion checks the plugin's protocol_version as the host
// reads it (§4.3, §8): a semantic version with the host's major.
func checkProtocolVersion(v *verdict, answered string) {
	got, err := semver.StrictNewVersion(answered)
	if err != nil {
		if got, err = semver.NewVersion(answered); err != nil {
			v.fail("protocol_version %q is not a semantic version (§4.3)", answered)
			return
		}
		v.warn("protocol_version %q is read as %s; send MAJOR.MINOR.PATCH (§4.3)", answered, got)
	}
	host := semver.MustParse(protocol.Version)
	if got.Major() != host.Major() {
		upgrade := "plugin"
		if got.Major() > host.Major() {
			upgrade = "host"
		}
		v.fail("protocol_version %s has another major version than the host's %s: upgrade the %s (§8)", answered, protocol.Version, upgrade)
	}
}

// declarations checks the answer to initialize against the manifest
// (§4.2, §4.3) and the identifier grammar (§4.5).
func (r *runner) declarations(res *protocol.InitializeResult) {
	var v verdict
	m := r.pkg.Manifest
	if res.Name != r.pkg.Name {
		v.fail("name: the plugin calls itself %q, its manifest %q; it MUST be the manifest's (§4.2)", res.Name, r.pkg.Name)
	}
	if got, err := semver.NewVersion(res.Version); err != nil || !got.Equal(m.Version) {
		v.warn("version: the plugin says %q, its manifest %q (§4.2)", res.Version, m.Version)
	}
	for i, d := range res.Interceptors {
		checkID(&v, fmt.Sprintf("interceptors[%d]: point", i), d.Point, contribution.Point(d.Point).Validate())
		if !slices.Contains(m.Runtime.Intercepts, contribution.Point(d.Point)) {
			v.fail("interceptors[%d]: point %q is not listed in runtime.intercepts (§4.3)", i, d.Point)
		}
		if p := d.Priority; p != nil && (*p < contribution.MinPriority || *p > contribution.MaxPriority) {
			v.fail("interceptors[%d]: priority %d is outside [%d, %d] (§4.3)", i, *p, contribution.MinPriority, contribution.MaxPriority)
		}
	}
	for i, d := range res.Strategies {
		checkID(&v, fmt.Sprintf("strategies[%d]: slot", i), d.Slot, contribution.Slot(d.Slot).Validate())
		if !slices.Contains(m.Runtime.Replaces, contribution.Slot(d.Slot)) {
			v.fail("strategies[%d]: slot %q is not listed in runtime.replaces (§4.3)", i, d.Slot)
		}
	}
	for i, d := range res.Provides {
		if msg := checkProvided(m, d.Capability, d.Version); msg != "" {
			v.fail("provides[%d]: %s (§4.3)", i, msg)
		}
	}
	seen := map[string]int{}
	for i, d := range res.Providers {
		path := fmt.Sprintf("providers[%d]: ref", i)
		checkID(&v, path, d.Ref, contribution.ValidateProviderRef(d.Ref))
		checkOnce(&v, seen, path, "provider:"+d.Ref, d.Ref, i)
	}
	for i, d := range res.Actions {
		path := fmt.Sprintf("actions[%d]: id", i)
		checkID(&v, path, d.ID, contribution.ValidateActionID(d.ID))
		checkOnce(&v, seen, path, "action:"+d.ID, d.ID, i)
	}
	checkContributions(&v, m, res.Contributions)
	if len(res.Contributions) > 0 && wire.Announces(res.ProtocolVersion) && !wire.ParseFeatures(res.Features).Has(wire.HasContributions) {
		v.fail("contributions: declared without announcing the %q feature (§4.6)", wire.FeatureContributions)
	}
	checkInputs(&v, res, r.opts.Inputs)
	r.add(v.result(caseDeclarations, "name and version are the manifest's; "+declared(res)))
}

// declared summarizes what res declares.
func declared(res *protocol.InitializeResult) string {
	var parts []string
	for _, k := range []struct {
		n         int
		one, many string
	}{
		{len(res.Interceptors), "interceptor", "interceptors"}, {len(res.Strategies), "strategy", "strategies"},
		{len(res.Providers), "provider", "providers"}, {len(res.Actions), "action", "actions"},
		{len(res.Provides), "capability", "capabilities"},
		{len(res.Contributions), "contribution of a host kind", "contributions of host kinds"},
	} {
		if k.n > 0 {
			parts = append(parts, plural(k.n, k.one, k.many))
		}
	}
	switch len(parts) {
	case 0:
		return "declares nothing"
	case 1:
		return "declares " + parts[0] + ", authorized by the manifest"
	}
	return "declares " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + ", each authorized by the manifest"
}

// checkID fails an identifier outside the grammar of §4.5.
func checkID(v *verdict, path, id string, err error) {
	if err != nil {
		v.fail("%s %q is not an identifier (lower-case dotted segments of a-z, 0-9, _ and -) (§4.5)", path, id)
	}
}

// checkOnce fails a provider ref or action ID declared twice (§4.3).
func checkOnce(v *verdict, seen map[string]int, path, key, id string, i int) {
	if j, ok := seen[key]; ok {
		v.fail("%s %q was already declared at index %d (§4.3)", path, id, j)
		return
	}
	seen[key] = i
}

// checkProvided returns why the manifest does not authorize the provided
// capability version, or "": the version must be a strict semantic
// version equal to the manifest's for that capability (build metadata
// ignored), as the host checks it.
func checkProvided(m *pluginpkg.Manifest, capability, version string) string {
	var versions []*semver.Version
	for _, p := range m.Provides {
		if string(p.Key) == capability && p.Version != nil {
			versions = append(versions, p.Version)
		}
	}
	if len(versions) == 0 {
		return fmt.Sprintf("capability %q is not listed in provides", capability)
	}
	want := make([]string, len(versions))
	for i, mv := range versions {
		want[i] = strconv.Quote(mv.String())
	}
	got, err := semver.StrictNewVersion(version)
	if err != nil {
		return fmt.Sprintf("capability %q version %q is not a semantic version MAJOR.MINOR.PATCH (the manifest's: %s)", capability, version, strings.Join(want, ", "))
	}
	for _, mv := range versions {
		if got.Equal(mv) {
			return ""
		}
	}
	return fmt.Sprintf("capability %q version %q is not the manifest's (%s)", capability, version, strings.Join(want, ", "))
}

// announcedFeatures describes the features the answer res announces
// (§4.6), for the handshake case: "" for an answer before 1.4.0, which
// announces none.
func announcedFeatures(res *protocol.InitializeResult) string {
	if !wire.Announces(res.ProtocolVersion) {
		return ""
	}
	names := wire.ParseFeatures(res.Features).Names()
	if len(names) == 0 {
		return ", announcing no feature"
	}
	return ", announcing features " + strings.Join(names, ", ")
}
