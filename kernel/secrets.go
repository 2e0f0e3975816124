package kernel

import (
	"encoding/json"
	"fmt"
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

// pluginEnv returns the environment the config gives a package and the
// names of its secret values, sorted.
func (k *Kernel) pluginEnv(name string) (map[string]string, []string) {
	vars := k.cfg.PluginEnv[name]
	if len(vars) == 0 {
		return nil, nil
	}
	env := make(map[string]string, len(vars))
	var secret []string
	for n, v := range vars {
		env[n] = v.Value
		if v.Secret {
			secret = append(secret, n)
		}
	}
	sort.Strings(secret)
	return env, secret
}

// convertEnv checks plugin_env: each value is a string or
// {"value": "...", "secret": true}; names are environment variable names
// outside the reserved EXTKERNEL_ prefix.
func convertEnv(in map[string]map[string]json.RawMessage, add func(string, ...any)) map[string]map[string]EnvVar {
	if len(in) == 0 {
		return nil
	}
	out := map[string]map[string]EnvVar{}
	for _, pkg := range sortedKeys(in) {
		if err := pluginpkg.ValidateName(pkg); err != nil {
			add("plugin_env.%s: %v", pkg, err)
			continue
		}
		out[pkg] = map[string]EnvVar{}
		for _, name := range sortedKeys(in[pkg]) {
			field := "plugin_env." + pkg + "." + name
			if !validEnvName(name) || strings.HasPrefix(name, pluginpkg.ReservedEnvPrefix) {
				add("%s: %q is not a usable environment variable name (letters, digits, '_'; not EXTKERNEL_*)", field, name)
				continue
			}
			v, err := envValue(in[pkg][name])
			if err != nil {
				add("%s: %v", field, err)
				continue
			}
			out[pkg][name] = v
		}
	}
	return out
}

func envValue(raw json.RawMessage) (EnvVar, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return EnvVar{Value: s}, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return EnvVar{}, fmt.Errorf(`must be a string or {"value": "...", "secret": true}`)
	}
	var v EnvVar
	for key, val := range obj {
		var err error
		switch key {
		case "value":
			err = json.Unmarshal(val, &v.Value)
		case "secret":
			err = json.Unmarshal(val, &v.Secret)
		default:
			return EnvVar{}, fmt.Errorf("%s: unknown key", key)
		}
		if err != nil {
			return EnvVar{}, fmt.Errorf("%s: wrong type", key)
		}
	}
	return v, nil
}

func validEnvName(s string) bool {
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return s != ""
}

// convertLimits checks limits: {"<package>": {"open_files": N,
// "address_space": BYTES}}.
func convertLimits(in map[string]map[string]json.RawMessage, add func(string, ...any)) map[string]sidecar.Limits {
	if len(in) == 0 {
		return nil
	}
	out := map[string]sidecar.Limits{}
	for _, pkg := range sortedKeys(in) {
		var l sidecar.Limits
		for _, key := range sortedKeys(in[pkg]) {
			var n uint64
			err := json.Unmarshal(in[pkg][key], &n)
			switch {
			case key != "open_files" && key != "address_space":
				add("limits.%s.%s: unknown key", pkg, key)
			case err != nil || n == 0:
				add("limits.%s.%s: must be a positive integer, got %s", pkg, key, in[pkg][key])
			case key == "open_files":
				l.OpenFiles = n
			default:
				l.AddressSpace = n
			}
		}
		out[pkg] = l
	}
	return out
}
