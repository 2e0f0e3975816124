package config

import (
	"sort"
	"strings"
)

// RedactedText replaces every secret value a Redactor finds.
const RedactedText = "[REDACTED]"

// Redactor returns the redaction of c's secrets: a function replacing
// every secret value of c.PluginEnv (EnvVar.Secret) with RedactedText,
// longest first, or nil when c has no secret value (nothing to redact).
// The kernel passes every string a plugin supplies through it before it
// logs, quotes or stores it (package sidecar's Options.Redact); a host
// handler (Config.Handlers) that logs or shows what a plugin sent it uses
// the same function, so that one rule redacts everything. The function is
// safe for concurrent use.
func (c Config) Redactor() func(string) string {
	var secrets []string
	for _, vars := range c.PluginEnv {
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
		pairs = append(pairs, s, RedactedText)
	}
	return strings.NewReplacer(pairs...).Replace
}
