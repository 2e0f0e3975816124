package pluginpkg

import (
	"encoding/json"
	"maps"
)

// jsonManifest is the canonical JSON form of a Manifest, fields in schema
// order, defaults omitted.
type jsonManifest struct {
	Format      int          `json:"format"`
	Name        string       `json:"name"`
	Version     string       `json:"version"`
	Description string       `json:"description,omitempty"`
	Runtime     *jsonRuntime `json:"runtime,omitempty"`
	Provides    []jsonProv   `json:"provides,omitempty"`
	Requires    []jsonReq    `json:"requires,omitempty"`
	Kernel      string       `json:"kernel,omitempty"`
	Permissions *jsonPerms   `json:"permissions,omitempty"`
}

type jsonPerms struct {
	FS   *jsonFS  `json:"fs,omitempty"`
	Net  *jsonNet `json:"net,omitempty"`
	Exec []string `json:"exec,omitempty"`
}

type jsonFS struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

type jsonNet struct {
	Connect []string `json:"connect,omitempty"`
}

type jsonRuntime struct {
	Command          string              `json:"command,omitempty"`
	Platforms        map[string]string   `json:"platforms,omitempty"`
	Args             []string            `json:"args,omitempty"`
	Env              map[string]string   `json:"env,omitempty"`
	Required         bool                `json:"required,omitempty"`
	Priority         int                 `json:"priority,omitempty"`
	Intercepts       []string            `json:"intercepts,omitempty"`
	Replaces         []string            `json:"replaces,omitempty"`
	Contributes      map[string][]string `json:"contributes,omitempty"`
	Activation       string              `json:"activation,omitempty"`
	HandshakeTimeout string              `json:"handshake_timeout,omitempty"`
}

type jsonProv struct {
	Capability string            `json:"capability"`
	Version    string            `json:"version"`
	Methods    map[string]string `json:"methods,omitempty"`
}

type jsonReq struct {
	Capability string `json:"capability"`
	Version    string `json:"version"`
	Optional   bool   `json:"optional,omitempty"`
}

// MarshalJSON encodes the manifest in its canonical plugin.json form: schema
// field order, default values omitted, versions as written, constraints as
// the semver library prints them. Parse accepts the result when the manifest
// is valid.
func (m *Manifest) MarshalJSON() ([]byte, error) {
	j := jsonManifest{Format: m.Format, Name: m.Name, Description: m.Description, Kernel: m.KernelText}
	if m.Version != nil {
		j.Version = m.Version.Original()
	}
	if j.Kernel == "" && m.Kernel != nil {
		j.Kernel = m.Kernel.String()
	}
	if rt := m.Runtime; rt != nil {
		jr := &jsonRuntime{Command: rt.Command, Platforms: maps.Clone(rt.Platforms), Args: rt.Args, Env: maps.Clone(rt.Env),
			Required: rt.Required, Priority: rt.Priority, Activation: rt.Activation}
		if len(rt.Platforms) > 0 {
			jr.Command = rt.DefaultCommand
		}
		for _, p := range rt.Intercepts {
			jr.Intercepts = append(jr.Intercepts, string(p))
		}
		for _, s := range rt.Replaces {
			jr.Replaces = append(jr.Replaces, string(s))
		}
		for kind, keys := range rt.Contributes {
			if jr.Contributes == nil {
				jr.Contributes = map[string][]string{}
			}
			jr.Contributes[string(kind)] = keys
		}
		if rt.HandshakeTimeout != 0 {
			jr.HandshakeTimeout = rt.HandshakeTimeout.String()
		}
		j.Runtime = jr
	}
	for _, p := range m.Provides {
		jp := jsonProv{Capability: string(p.Key), Methods: maps.Clone(m.Methods[p.Key])}
		if p.Version != nil {
			jp.Version = p.Version.Original()
		}
		j.Provides = append(j.Provides, jp)
	}
	for _, r := range m.Requires {
		jr := jsonReq{Capability: string(r.Key), Optional: r.Optional}
		if r.Constraint != nil {
			jr.Version = r.Constraint.String()
		}
		j.Requires = append(j.Requires, jr)
	}
	if p := m.Permissions; p != nil {
		j.Permissions = &jsonPerms{Exec: p.Exec}
		if len(p.Read)+len(p.Write) > 0 {
			j.Permissions.FS = &jsonFS{Read: p.Read, Write: p.Write}
		}
		if len(p.Connect) > 0 {
			j.Permissions.Net = &jsonNet{Connect: p.Connect}
		}
	}
	return json.MarshalIndent(j, "", "  ")
}
