package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// memoryPackage makes a copy of the demo's memory package in a temporary
// directory, its plugin built into bin/memory there.
func memoryPackage(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "memory")
	src := filepath.Join(demoHome, "packages", "memory")
	copyFile(t, filepath.Join(src, "plugin.json"), filepath.Join(dir, "plugin.json"))
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "memory"), "./"+src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// TestGoldenConformance runs `kernelctl conformance` on a well-behaved
// plugin: every case passes, exit 0.
func TestGoldenConformance(t *testing.T) {
	dir := memoryPackage(t)
	tests := []struct {
		name string
		args []string
	}{
		{"conformance-memory", []string{"conformance", dir}},
		{"conformance-memory-json", []string{"conformance", "--json", dir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != exitOK {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, exitOK, stderr.String())
			}
			checkGolden(t, tt.name, bytes.ReplaceAll(stdout.Bytes(), []byte(dir), []byte("<pkg>")))
		})
	}
	noChildren(t)
}

// TestConformanceExitCodes checks the exit codes: 1 when a case failed
// (with the case in the output), 64 for a bad argument.
func TestConformanceExitCodes(t *testing.T) {
	crash := filepath.Join(t.TempDir(), "crash")
	writeFile(t, filepath.Join(crash, "plugin.json"), `{"format": 1, "name": "crash", "version": "1.0.0", "runtime": {"command": "./run.sh"}}`)
	writeFile(t, filepath.Join(crash, "run.sh"), "#!/bin/sh\necho 'fatal: no config' >&2\nexit 3\n")
	if err := os.Chmod(filepath.Join(crash, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a line of stdout
		stderr string // a prefix of stderr
	}{
		{"failing plugin", []string{"conformance", crash}, exitFailed,
			"  FAIL  initialize was not answered; the plugin exited (exit status 3); its last stderr: fatal: no config\n", ""},
		{"failing plugin json", []string{"conformance", "--json", crash}, exitFailed, `"failed": 1,`, ""},
		{"no argument", []string{"conformance"}, exitUsage, "", "kernelctl: accepts 1 arg(s), received 0"},
		{"missing directory", []string{"conformance", filepath.Join(crash, "nosuch")}, exitUsage, "", "kernelctl: conformance: stat "},
		{"a file", []string{"conformance", filepath.Join(crash, "plugin.json")}, exitUsage, "", "kernelctl: conformance: " + crash + "/plugin.json is not a package directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit code = %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			if tt.stdout != "" && !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout.String())
			}
			if !strings.HasPrefix(stderr.String(), tt.stderr) {
				t.Errorf("stderr = %q, want prefix %q", stderr.String(), tt.stderr)
			}
		})
	}
	noChildren(t)
}

// TestConformanceConfig checks that --config gives the plugin its
// package's plugin_config and plugin_env, as the kernel does: a plugin
// that needs both only passes with them.
func TestConformanceConfig(t *testing.T) {
	needs := filepath.Join(t.TempDir(), "needs")
	writeFile(t, filepath.Join(needs, "plugin.json"), `{"format": 1, "name": "needs", "version": "1.0.0", "runtime": {"command": "sh", "args": ["plugin.sh"]}}`)
	// Answers initialize only when its config and env arrived, then serves
	// ping, shutdown and unknown methods one at a time.
	writeFile(t, filepath.Join(needs, "plugin.sh"), `read -r line
case $line in *'"config":{"key":"v"}'*) ;; *) echo "no config: $line" >&2; exit 1 ;; esac
[ "$NEEDS_TOKEN" = t0k ] || { echo "no NEEDS_TOKEN" >&2; exit 1; }
printf '{"jsonrpc":"2.0","id":1,"result":{"protocol_version":"1.0.0","name":"needs","version":"1.0.0"}}\n'
while IFS= read -r line; do
	case $line in
	*'"method":"$/cancel"'*) ;;
	*'"method":"ping"'*|*'"method":"shutdown"'*) id=${line#*\"id\":}; printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "${id%%,*}" ;;
	*'"method":'*) id=${line#*\"id\":}; printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\n' "${id%%,*}" ;;
	esac
done
`)
	cfg := filepath.Join(t.TempDir(), "kernel.json")
	writeFile(t, cfg, `{"format": 1, "plugin_config": {"needs": {"key": "v"}}, "plugin_env": {"needs": {"NEEDS_TOKEN": {"value": "t0k", "secret": true}}}}`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"conformance", "--json", needs}, &stdout, &stderr); code != exitFailed {
		t.Errorf("without --config: exit code %d, want %d\n%s", code, exitFailed, stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"conformance", "--json", "--config", cfg, needs}, &stdout, &stderr); code != exitOK {
		t.Errorf("with --config: exit code %d, want %d; stderr %s\n%s", code, exitOK, stderr.String(), stdout.String())
	}
	var out conformanceOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Plugin != "needs" || out.Failed != 0 || out.Passed+out.Warned != len(out.Cases) {
		t.Errorf("report = %+v", out)
	}
	noChildren(t)
}

// TestConformanceInputs checks that conformance invokes a contribution of
// a host kind (a tool whose handler kills its process fails its case and
// the run), with the input --inputs gives it (then it passes), and that a
// file that is not a JSON object is a usage error.
func TestConformanceInputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	writeFile(t, filepath.Join(dir, "plugin.json"), `{"format": 1, "name": "tools", "version": "1.0.0",
  "runtime": {"command": "sh", "args": ["plugin.sh"], "contributes": {"tool": ["search.web"]}}}`)
	// Its tool search.web answers when given an input and exits otherwise.
	writeFile(t, filepath.Join(dir, "plugin.sh"), `while IFS= read -r line; do
	id=${line#*\"id\":}; id=${id%%,*}
	case $line in
	*'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocol_version":"1.3.0","name":"tools","version":"1.0.0","contributions":[{"kind":"tool","key":"search.web"}]}}\n' "$id" ;;
	*'"method":"contribution/invoke"'*'"input":{'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"output":"found"}}\n' "$id" ;;
	*'"method":"contribution/invoke"'*) echo "search.web: no query" >&2; exit 3 ;;
	*'"method":"$/cancel"'*) ;;
	*'"method":"ping"'*|*'"method":"shutdown"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
	*'"method":'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}\n' "$id" ;;
	esac
done
`)
	inputs := filepath.Join(t.TempDir(), "inputs.json")
	writeFile(t, inputs, `{"tool/search.web": {"q": "extkernel"}}`)
	notObject := filepath.Join(t.TempDir(), "list.json")
	writeFile(t, notObject, `[1]`)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"without inputs", []string{"conformance", dir}, exitFailed,
			"call/tool/search.web  FAIL  no answer within 2s, nor 1s after $/cancel; the plugin exited (exit status 3); its last stderr: search.web: no query", ""},
		{"with inputs", []string{"conformance", "--inputs", inputs, dir}, exitOK, "call/tool/search.web  PASS  answered with a result", ""},
		{"inputs not an object", []string{"conformance", "--inputs", notObject, dir}, exitUsage, "",
			"kernelctl: conformance: --inputs " + notObject + ": not a JSON object keyed by <kind>/<id>: json: cannot unmarshal array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tt.args, &stdout, &stderr); code != tt.code {
				t.Errorf("exit code = %d, want %d; stderr:\n%s\nstdout:\n%s", code, tt.code, stderr.String(), stdout.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout.String())
			}
			if !strings.HasPrefix(stderr.String(), tt.stderr) {
				t.Errorf("stderr = %q, want prefix %q", stderr.String(), tt.stderr)
			}
		})
	}
	noChildren(t)
}

// TestDocConformanceExample holds docs/cli.md's example of `kernelctl
// conformance` to what the binary prints (the conformance-memory golden
// file): every line of the example but the elisions is a line of the
// output, /src/memory standing for the package directory.
func TestDocConformanceExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "golden", "conformance-memory.golden"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## `kernelctl conformance --json`")
	_, block, _ := strings.Cut(section, "```\n")
	block, _, _ = strings.Cut(block, "```")
	if !strings.HasPrefix(block, "conformance of memory") {
		t.Fatalf("docs/cli.md: no example of kernelctl conformance's text output found")
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(strings.ReplaceAll(string(golden), "<pkg>", "/src/memory"), "\n") {
		lines[l] = true
	}
	for _, l := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		if l != "…" && !lines[l] {
			t.Errorf("docs/cli.md's conformance example shows a line the binary does not print:\n%s", l)
		}
	}
}
