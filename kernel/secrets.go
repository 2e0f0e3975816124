package kernel

import (
	"sort"
	"strings"

	"github.com/extkernel/extkernel/kernel/config"
)

// redactedText replaces every secret value in logs and error messages.
const redactedText = "[REDACTED]"

// redactor returns a function replacing every secret value of env with
// redactedText, longest first, or nil when there is no secret.
func redactor(env map[string]map[string]config.EnvVar) func(string) string {
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
		pairs = append(pairs, s, redactedText)
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}

// pluginEnv returns the environment the config gives a package and the
// names of its secret values, sorted.
func (k *Kernel) pluginEnv(name string) (map[string]string, []string) {
	vars := k.config().PluginEnv[name]
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

// Redactor returns the function the kernel passes every string a plugin
// supplies through before it logs, quotes or stores it: it replaces the secret
// values of cfg.PluginEnv with "[REDACTED]" (the identity when there is none).
// A host handler (config.Config.Handlers) that logs or shows what a plugin sent
// it uses this function, so that one rule redacts everything.
func Redactor(cfg config.Config) func(string) string {
	if r := redactor(cfg.PluginEnv); r != nil {
		return r
	}
	return func(s string) string { return s }
}
