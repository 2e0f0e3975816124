// Command build compiles the demo home's Go plugins: for every
// testdata/demo/home/packages/<name>/main.go it runs
// `go build -o packages/<name>/bin/<name>`. Run it from the repository root:
//
//	go run ./testdata/demo/build
//
// It is idempotent and cheap when nothing changed (the Go build cache).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

func main() {
	pkgs := filepath.Join("testdata", "demo", "home", "packages")
	if len(os.Args) > 1 {
		pkgs = filepath.Join(os.Args[1], "packages")
	}
	entries, err := os.ReadDir(pkgs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "build: %v (run from the repository root)\n", err)
		os.Exit(1)
	}
	for _, e := range entries {
		dir := filepath.Join(pkgs, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
			continue
		}
		out := filepath.Join(dir, "bin", e.Name())
		cmd := exec.Command("go", "build", "-o", out, "./"+filepath.ToSlash(dir))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build: %s: %v\n", dir, err)
			os.Exit(1)
		}
	}
}
