package sdk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/extkernel/extkernel/internal/proctest"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// TestCrossLanguageIdentity checks that the Python and Node.js SDKs, like
// New, take a plugin's name and version from EXTKERNEL_PLUGIN_NAME and
// EXTKERNEL_PLUGIN_VERSION when none is given, and that a value given wins.
func TestCrossLanguageIdentity(t *testing.T) {
	langs := []struct {
		name, interpreter, sdk, script, bare, given string
	}{
		{"python", "python3", "python/extkernel.py", "plugin.py",
			"import extkernel\nextkernel.Plugin().serve()\n",
			"import extkernel\nextkernel.Plugin(\"given\", \"9.9.9\").serve()\n"},
		{"node", "node", "node/extkernel.js", "plugin.js",
			"const { Plugin } = require('./extkernel');\nnew Plugin().serve();\n",
			"const { Plugin } = require('./extkernel');\nnew Plugin('given', '9.9.9').serve();\n"},
	}
	for _, lang := range langs {
		for _, tt := range []struct{ name, source, wantName, wantVersion string }{
			{"from the environment", lang.bare, "envname", "2.3.4"},
			{"given wins", lang.given, "given", "9.9.9"},
		} {
			t.Run(lang.name+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				sdkSource, err := os.ReadFile(lang.sdk)
				if err != nil {
					t.Fatal(err)
				}
				for name, data := range map[string][]byte{filepath.Base(lang.sdk): sdkSource, lang.script: []byte(tt.source)} {
					if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				env := []string{wire.EnvPluginName + "=envname", wire.EnvPluginVersion + "=2.3.4"}
				p := startCommand(t, proctest.Interpreter(t, lang.interpreter), dir, env, lang.script)
				p.send(1, wire.MethodInitialize, initParams(protocol.Version))
				var res protocol.InitializeResult
				if err := json.Unmarshal(p.expect(1, "", 0).Result, &res); err != nil {
					t.Fatal(err)
				}
				if res.Name != tt.wantName || res.Version != tt.wantVersion {
					t.Errorf("initialize answered name %q version %q, want %q %q", res.Name, res.Version, tt.wantName, tt.wantVersion)
				}
				p.send(2, wire.MethodShutdown, nil)
				p.expect(2, `{}`, 0)
				p.exit()
			})
		}
	}
}
