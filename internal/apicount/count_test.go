package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestCountTree counts the fixture module testdata/mod, whose comments say
// what each declaration adds, for two systems: the build-tagged files of
// the other system are left out, and so are test files, main packages,
// testdata and the nested module.
func TestCountTree(t *testing.T) {
	tests := []struct {
		goos string
		want []count
	}{
		{"linux", []count{
			{dir: "api", top: 10, methods: 3, iface: 2, fields: 4},
			{dir: "internal/helper", top: 1, methods: 1, fields: 1},
		}},
		{"windows", []count{
			{dir: "api", top: 11, methods: 3, iface: 2, fields: 4},
			{dir: "internal/helper", top: 1, methods: 1, fields: 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.goos, func(t *testing.T) {
			got, err := countTree("testdata/mod", tt.goos)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("countTree = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestWrite prints public packages, then internal ones, each group with
// its sum; total leaves interface methods out.
func TestWrite(t *testing.T) {
	var b strings.Builder
	write(&b, []count{
		{dir: "a", top: 1, methods: 2, iface: 5, fields: 3},
		{dir: "b", top: 10},
		{dir: "internal/x", top: 4, fields: 1},
	})
	want := []string{
		"package top methods iface fields total",
		"a 1 2 5 3 6",
		"b 10 0 0 0 10",
		"(public) 11 2 5 3 16",
		"internal/x 4 0 0 1 5",
		"(internal) 4 0 0 1 5",
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		got = append(got, strings.Join(strings.Fields(line), " "))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("write printed\n%s\nwant (spacing aside)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
