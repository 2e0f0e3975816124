package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/protocol"
)

// kernelRangeCases are packages whose "kernel" range admits this kernel's
// protocol or not; warning is the sentence run fails their start with ("" when
// it starts them), which validate warns with and doctor reports.
func kernelRangeCases() []struct{ name, kernel, warning string } {
	major := semver.MustParse(protocol.Version).Major()
	upgrade := func(kernel, side string) string {
		return fmt.Sprintf("plugin wants protocol %s but this host speaks %s: upgrade the %s", kernel, protocol.Version, side)
	}
	current, future, past := fmt.Sprintf("^%d.0", major), fmt.Sprintf("^%d.0", major+1), fmt.Sprintf("<%d.0.0", major)
	return []struct{ name, kernel, warning string }{
		{name: "current", kernel: current},
		{name: "declarative", kernel: future}, // never started: its range is never checked
		{name: "future", kernel: future, warning: upgrade(future, "host")},
		{name: "past", kernel: past, warning: upgrade(past, "plugin")},
		{name: "unbounded"},
	}
}

// kernelRangeHome writes one package per kernelRangeCases entry.
func kernelRangeHome(t *testing.T) string {
	home := t.TempDir()
	for _, tc := range kernelRangeCases() {
		m := map[string]any{"format": 1, "name": tc.name, "version": "1.0.0"}
		if tc.name != "declarative" {
			m["runtime"] = map[string]any{"command": "./bin/" + tc.name}
		}
		if tc.kernel != "" {
			m["kernel"] = tc.kernel
		}
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(home, "packages", tc.name, "plugin.json"), string(data))
	}
	return home
}

// TestValidateKernelRange checks that validate warns, with run's sentence,
// about a valid manifest whose protocol range excludes this kernel, and that
// the warning leaves the manifest valid (exit code 0).
func TestValidateKernelRange(t *testing.T) {
	home := kernelRangeHome(t)
	var wantText bytes.Buffer
	var wantJSON []manifestResult
	warnings := 0
	for _, tc := range kernelRangeCases() {
		path := filepath.Join(home, "packages", tc.name, "plugin.json")
		r := manifestResult{Path: path, Valid: true, Problems: []problemField{}, Warnings: []problemField{}}
		if tc.warning == "" {
			fmt.Fprintf(&wantText, "%s: ok\n", path)
		} else {
			fmt.Fprintf(&wantText, "%s: warning: kernel: %s\n", path, tc.warning)
			r.Warnings = append(r.Warnings, problemField{"kernel", tc.warning})
			warnings++
		}
		wantJSON = append(wantJSON, r)
	}
	n := len(wantJSON)
	fmt.Fprintf(&wantText, "\n%d manifests: %d valid, 0 invalid, %d warnings\n", n, n, warnings)

	var stdout, stderr bytes.Buffer
	if code := run([]string{"validate", "--home", home}, &stdout, &stderr); code != exitOK {
		t.Errorf("validate: exit code %d, want %d; stderr:\n%s", code, exitOK, stderr.String())
	}
	if stdout.String() != wantText.String() {
		t.Errorf("validate:\n%s\nwant:\n%s", stdout.String(), wantText.String())
	}
	stdout.Reset()
	if code := run([]string{"validate", "--home", home, "--json"}, &stdout, &stderr); code != exitOK {
		t.Errorf("validate --json: exit code %d, want %d", code, exitOK)
	}
	var got validateOutput
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("validate --json: %v\n%s", err, stdout.String())
	}
	if want := (validateOutput{Manifests: wantJSON, Valid: n}); !reflect.DeepEqual(got, want) {
		t.Errorf("validate --json:\n%+v\nwant:\n%+v", got, want)
	}
}

// TestDoctorKernelRange checks that doctor reports an enabled runtime
// package whose protocol range excludes this kernel with run's sentence,
// which says which side to upgrade.
func TestDoctorKernelRange(t *testing.T) {
	home := kernelRangeHome(t)
	var want []doctorFinding
	for _, tc := range kernelRangeCases() {
		if tc.warning != "" {
			want = append(want, doctorFinding{Severity: "problem", Package: tc.name, Check: "protocol", Message: tc.warning})
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"doctor", "--home", home, "--json"}, &stdout, &stderr); code != exitFailed {
		t.Errorf("doctor: exit code %d, want %d; stderr:\n%s", code, exitFailed, stderr.String())
	}
	var out doctorOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, stdout.String())
	}
	var got []doctorFinding
	for _, f := range out.Findings {
		if f.Check == "protocol" {
			got = append(got, f)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("doctor protocol findings:\n%+v\nwant:\n%+v", got, want)
	}
}
