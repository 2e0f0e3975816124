package admin

import (
	"reflect"
	"strings"
	"testing"

	"github.com/extkernel/extkernel/kernel/observe"
)

// TestPluginStatusNamesMatch checks that each key of a plugin's status in
// GET /v1/status is the name of an observe.PluginStatus field (issue 26
// item 9): a host reading kernel.Kernel.Plugins and an operator reading
// the JSON use one vocabulary. Keys the admin API derives (uptime_seconds)
// have no field.
func TestPluginStatusNamesMatch(t *testing.T) {
	derived := map[string]bool{"uptime_seconds": true}
	fields := reflect.TypeFor[observe.PluginStatus]()
	at := reflect.TypeFor[PluginStatus]()
	for i := range at.NumField() {
		key, _, _ := strings.Cut(at.Field(i).Tag.Get("json"), ",")
		if derived[key] {
			continue
		}
		if _, ok := fields.FieldByName(camel(key)); !ok {
			t.Errorf("JSON key %q (admin.PluginStatus.%s): observe.PluginStatus has no field %s",
				key, at.Field(i).Name, camel(key))
		}
	}
}

// camel turns a JSON key into its Go field name: "pid" is PID,
// "since" Since.
func camel(key string) string {
	if key == "pid" {
		return "PID"
	}
	var b strings.Builder
	for part := range strings.SplitSeq(key, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
