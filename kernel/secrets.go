package kernel

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/sidecar"
)

// Redacted replaces every secret value in logs and error messages.
const Redacted = "[REDACTED]"

// EnvVar is one environment variable the host gives a plugin. A Secret
// value is passed to the plugin but never appears in logs, error messages,
// snapshots or fingerprints: wherever plugin text is logged or quoted, it is
// replaced by Redacted.
type EnvVar struct {
	Value  string
	Secret bool
}

// redactor returns a function replacing every secret value of env with
// Redacted, longest first, or nil when there is no secret.
func redactor(env map[string]map[string]EnvVar) func(string) string {
	var secrets []string
	for _, vars := range env {
		for _, v := range vars {
			if v.Secret && v.Value != "" {
				secrets = append(secrets, v.Value)
			}
		}
	}
	if len(secrets) == 0 {
		return nil
	}
	sort.Slice(secrets, func(i, j int) bool {
		if len(secrets[i]) != len(secrets[j]) {
			return len(secrets[i]) > len(secrets[j])
		}
		return secrets[i] < secrets[j]
	})
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, Redacted)
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}

// customize gives a package's sidecar its host environment and limits.
func (k *Kernel) customize(p *pluginpkg.Package, o *sidecar.Options) {
	if vars := k.cfg.PluginEnv[p.Name]; len(vars) > 0 {
		o.Env = make(map[string]string, len(vars))
		for name, v := range vars {
			o.Env[name] = v.Value
		}
	}
	o.Limits = k.cfg.Limits[p.Name]
}

// extraInputs identifies what customize adds to a package, for its
// fingerprint: the environment with secret values masked (a changed secret
// value is not detected; see docs/config.md) and the limits.
func (k *Kernel) extraInputs(name string) []byte {
	vars, limits := k.cfg.PluginEnv[name], k.cfg.Limits[name]
	if len(vars) == 0 && limits == (sidecar.Limits{}) {
		return nil
	}
	masked := make(map[string]string, len(vars))
	for n, v := range vars {
		masked[n] = v.Value
		if v.Secret {
			masked[n] = Redacted
		}
	}
	data, _ := json.Marshal(struct {
		Env    map[string]string `json:"env,omitempty"`
		Limits sidecar.Limits    `json:"limits"`
	}{masked, limits}) // maps marshal in key order: deterministic
	return data
}
