package kernel

import (
	"sort"

	"github.com/extkernel/extkernel/kernel/config"
)

// redactedText replaces every secret value in logs and error messages.
const redactedText = config.RedactedText

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
