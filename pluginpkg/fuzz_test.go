package pluginpkg

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks Parse's contract on arbitrary input: it never panics; it
// returns either a manifest or a *ValidationError with at least one
// problem, deterministically; a returned manifest validates, and its
// canonical JSON parses back to the same canonical JSON.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(manifestsDir, "*", "*", ManifestFile))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed manifests: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("fuzz.json", data)
		if err != nil {
			checkValidationError(t, data, m, err)
			return
		}
		if m == nil {
			t.Fatal("Parse returned neither a manifest nor an error")
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("parsed manifest does not validate: %v", err)
		}
		canon, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		m2, err := Parse("canonical.json", canon)
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, canon)
		}
		canon2, _ := m2.MarshalJSON()
		if !bytes.Equal(canon, canon2) {
			t.Fatalf("canonical form is not a fixed point:\n%s\n%s", canon, canon2)
		}
	})
}

func checkValidationError(t *testing.T, data []byte, m *Manifest, err error) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error is %T, want *ValidationError: %v", err, err)
	}
	if m != nil {
		t.Fatal("Parse returned both a manifest and an error")
	}
	if ve.Path != "fuzz.json" || len(ve.Problems) == 0 {
		t.Fatalf("ValidationError{Path: %q, Problems: %v}", ve.Path, ve.Problems)
	}
	for _, p := range ve.Problems {
		if p.Message == "" {
			t.Fatalf("problem with an empty message at %q", p.Field)
		}
	}
	if _, err2 := Parse("fuzz.json", data); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("Parse is not deterministic:\n%v\n%v", err, err2)
	}
}

// FuzzParseFields drives the value rules directly: fuzzed strings land in
// the fields whose grammar is richest (versions, constraints, commands, env
// names, durations, IDs) inside an otherwise valid manifest, so the
// round-trip invariants of FuzzParse are exercised on accepted values far
// more often than byte-level mutation reaches them.
func FuzzParseFields(f *testing.F) {
	f.Add("1.2.3-beta.1+b.7", "^1.2 || >=3.0.0-0, <4", "./bin/x", "MY_VAR", "1m30s", "tool.before", int64(5))
	f.Add("0.0.0", "1.x", "python3", "_", "60s", "a-b.c_d", int64(-1000))
	f.Add("v1", "~>2", "../x", "EXTKERNEL_X", "0s", "A", int64(1001))
	f.Fuzz(func(t *testing.T, version, constraint, command, envKey, timeout, point string, priority int64) {
		doc := map[string]any{
			"format": 1, "name": "fuzz", "version": version,
			"runtime": map[string]any{
				"command": command, "env": map[string]string{envKey: "v"},
				"handshake_timeout": timeout, "priority": priority,
				"intercepts": []string{point}, "replaces": []string{point},
			},
			"provides": []map[string]any{{"capability": point, "version": version}},
			"requires": []map[string]any{{"capability": "other." + point, "version": constraint}},
			"kernel":   constraint,
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Skip()
		}
		m, err := Parse("fuzz.json", data)
		if err != nil {
			checkValidationError(t, data, m, err)
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("parsed manifest does not validate: %v", err)
		}
		canon, _ := m.MarshalJSON()
		if _, err := Parse("canonical.json", canon); err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, canon)
		}
	})
}
