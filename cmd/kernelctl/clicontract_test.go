//go:build unix

package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// contractRow is one command's row of docs/cli.md's table "Every command:
// exit codes and --json".
type contractRow struct {
	codes              []int
	required, optional []string // top-level members
	ndjson             bool
}

var (
	contractLine = regexp.MustCompile("^\\| `([a-z-]+)` \\| ([0-9, ]+) \\| (.*) \\|$")
	contractKey  = regexp.MustCompile(`"([a-z_]+)"(\??)`)
)

// readContract parses the table of docs/cli.md; "as `install`" rows
// copy install's members.
func readContract(t *testing.T) map[string]contractRow {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]contractRow{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := contractLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var r contractRow
		for _, c := range strings.Split(m[2], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil {
				t.Fatalf("docs/cli.md: %q: exit code %q", line, c)
			}
			r.codes = append(r.codes, n)
		}
		if as, ok := strings.CutPrefix(m[3], "as `"); ok {
			r2 := rows[strings.TrimSuffix(as, "`")]
			r.required, r.optional, r.ndjson = r2.required, r2.optional, r2.ndjson
		}
		r.ndjson = r.ndjson || strings.HasPrefix(m[3], "NDJSON")
		for _, k := range contractKey.FindAllStringSubmatch(m[3], -1) {
			if k[2] == "?" {
				r.optional = append(r.optional, k[1])
			} else {
				r.required = append(r.required, k[1])
			}
		}
		rows[m[1]] = r
	}
	return rows
}

// binaryCommands lists the commands `kernelctl --help` shows, but help
// and completion.
func binaryCommands(t *testing.T) []string {
	t.Helper()
	code, help, stderr := runBinary(t, "--help")
	if code != exitOK {
		t.Fatalf("kernelctl --help: exit %d\n%s", code, stderr)
	}
	_, list, _ := strings.Cut(help, "Available Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] != "help" && f[0] != "completion" {
			names = append(names, f[0])
		}
	}
	return names
}

// checkContract holds one run of a command to its row: its exit code is
// one the row lists, and each document (one, or each NDJSON line) has
// the row's members.
func checkContract(t *testing.T, r contractRow, code int, stdout string) {
	t.Helper()
	if !slices.Contains(r.codes, code) {
		t.Errorf("exit code %d is not one docs/cli.md lists (%v)", code, r.codes)
	}
	docs := []string{stdout}
	if r.ndjson {
		docs = strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if stdout == "" {
			docs = nil // no line (yet): nothing to check
		}
	}
	for _, d := range docs {
		var got map[string]json.RawMessage
		if err := json.Unmarshal([]byte(d), &got); err != nil {
			t.Fatalf("not a JSON object (%v):\n%s", err, d)
		}
		for _, k := range r.required {
			if _, ok := got[k]; !ok {
				t.Errorf("no %q, which docs/cli.md lists, in:\n%.400s", k, d)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(got)) {
			if !slices.Contains(r.required, k) && !slices.Contains(r.optional, k) {
				t.Errorf("%q, which docs/cli.md does not list, in:\n%.400s", k, d)
			}
		}
	}
}

// TestCLIContractTable runs every command of the binary with --json on a
// copy of the demo home (the admin commands against a `run` of it) and
// holds its exit code and output to docs/cli.md's table, which lists
// every command the binary has.
func TestCLIContractTable(t *testing.T) {
	buildDemo(t)
	rows := readContract(t)
	if got, want := slices.Sorted(maps.Keys(rows)), slices.Sorted(slices.Values(binaryCommands(t))); !slices.Equal(got, want) {
		t.Fatalf("docs/cli.md's table lists %v, the binary has %v", got, want)
	}
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	copyDir(t, demoHome, home)
	os.RemoveAll(filepath.Join(home, "state"))
	cfg := filepath.Join(dir, "kernel.json")
	data, err := os.ReadFile(demoConfig)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, cfg, string(data))
	src := filepath.Join(dir, "src", "notes")
	copyDir(t, filepath.Join(demoHome, "packages", "themes"), src)
	editManifest(t, src, func(m map[string]any) { m["name"] = "notes" })
	src2 := filepath.Join(dir, "src2", "notes")
	copyDir(t, src, src2)
	editManifest(t, src2, func(m map[string]any) { m["version"] = "1.1.0" })

	offline := [][]string{
		{"list"}, {"validate"}, {"resolve"}, {"enable", "themes"}, {"disable", "themes"}, {"enable", "themes"},
		{"run", "--once"}, {"plan"}, {"doctor"}, {"pin", "memory"}, {"pin", "memory", "--clear"}, {"version"},
		{"new", "hello", "--lang", "python", "--dir", filepath.Join(dir, "hello")},
		{"conformance", filepath.Join(home, "packages", "kvstore")},
		{"install", src}, {"upgrade", src2}, {"rollback", "notes"}, {"accept-permissions", "notes"}, {"remove", "notes"},
		{"pack", src, "-o", filepath.Join(dir, "notes.oci")},
		{"push", filepath.Join(dir, "notes.oci"), registryHost(t) + "/acme/notes:1.0.0", "--plain-http"},
	}
	seen := map[string]bool{}
	for _, args := range offline {
		seen[args[0]] = true
		t.Run(caseName(args), func(t *testing.T) {
			code, stdout, _ := runBinary(t, append(args, "--config", cfg, "--json")...)
			checkContract(t, rows[args[0]], code, stdout)
		})
	}
	snap := filepath.Join(home, "state", "snapshots", "1.json")
	seen["diff"] = true
	t.Run("diff", func(t *testing.T) {
		code, stdout, _ := runBinary(t, "diff", snap, snap, "--json")
		checkContract(t, rows["diff"], code, stdout)
	})

	_, _, _, exited := startKernelctl(t, "run", "--config", cfg)
	for _, args := range [][]string{
		{"status"}, {"describe"}, {"call", "provider", "plugin/kvstore/put", `{"key": "k", "value": 1}`},
		{"call", "intercept", "tool.before", `{"cmd": "curl -H sk-abcdefghijkl"}`}, {"restart", "memory"},
		{"reload"}, {"logs"}, {"events"}, {"stop"},
	} {
		seen[args[0]] = true
		t.Run(caseName(args), func(t *testing.T) {
			code, stdout, stderr := runBinary(t, append(args, "--config", cfg, "--json")...)
			if code != exitOK {
				t.Errorf("exit %d; stderr:\n%s", code, stderr)
			}
			checkContract(t, rows[args[0]], code, stdout)
		})
	}
	if err := <-exited; err != nil {
		t.Errorf("kernelctl run after stop: %v", err)
	}
	exited <- nil // for the cleanup
	for name := range rows {
		if !seen[name] {
			t.Errorf("%s: no case runs it", name)
		}
	}
}

// caseName names a case by its arguments, a path or JSON as "ARG".
func caseName(args []string) string {
	out := slices.Clone(args)
	for i, a := range out {
		if strings.ContainsAny(a, "/{") {
			out[i] = "ARG"
		}
	}
	return strings.Join(out, " ")
}

// editManifest rewrites the manifest of the package directory dir.
func editManifest(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, "plugin.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(data))
}
