package config

import "testing"

// TestRedactor: every secret value is replaced, the longest first (so a
// secret containing another is replaced whole); values that are not
// secret stay; a config without secrets has no redactor.
func TestRedactor(t *testing.T) {
	if r := (Config{PluginEnv: map[string]map[string]EnvVar{"p": {"MODE": {Value: "fast"}}}}).Redactor(); r != nil {
		t.Errorf("a config without secrets has a redactor: %q", r("fast"))
	}
	c := Config{PluginEnv: map[string]map[string]EnvVar{
		"a": {"TOKEN": {Value: "tok", Secret: true}, "MODE": {Value: "fast"}},
		"b": {"KEY": {Value: "tok-long", Secret: true}, "EMPTY": {Secret: true}},
	}}
	r := c.Redactor()
	for in, want := range map[string]string{
		"tok-long and tok": "[REDACTED] and [REDACTED]",
		"fast":             "fast",
		"":                 "",
	} {
		if got := r(in); got != want {
			t.Errorf("r(%q) = %q, want %q", in, got, want)
		}
	}
}
