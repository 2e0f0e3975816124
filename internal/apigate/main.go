// Command apigate holds the exported Go API of the module's public
// packages to what the last release promised (docs/compatibility.md):
//
//	go run ./internal/apigate [-write | -freeze] [-dir .] [-pkgs admin,kernel,...]
//
// The API is kept in two committed files under api/, one line per
// exported name with its full type, in the form of Go's own api/*.txt
// ("pkg kernel, func New(context.Context, Options) (*Kernel, error)"),
// for GOOS=linux GOARCH=amd64:
//
//   - api/v0.txt, the API of the last release. The module has no release
//     tag yet: it is the API as the gate found it when it was added.
//   - api/v0.next.txt, the lines added since.
//
// The gate fails (exit status 1) when:
//
//  1. a line of api/v0.txt is missing from the code (a name removed, or
//     its type changed), unless CHANGELOG.md's "## Unreleased" section
//     names it in a `code span` under a heading that starts with
//     "### Breaking" (the module is v0: a breaking change is allowed, but
//     only written down). The span is the name qualified by its package's
//     path or name: `generation.Plan.Names`, `kernel/config.Config.Home`
//     or `config.Config.Home`; naming a type (`generation.Plan`) covers
//     its fields and methods. A new module path (a new major version)
//     allows every removal.
//  2. the code has a line neither file has: an addition not recorded.
//  3. api/v0.next.txt has a line the code lacks.
//
// -write rewrites api/v0.next.txt as the code's lines that api/v0.txt
// lacks, fixing 2 and 3, never 1. -freeze, at a release (when the
// CHANGELOG's "## Unreleased" becomes the release's section), rewrites
// api/v0.txt as the code's API and empties api/v0.next.txt.
//
// Exit status 2 is a usage error or a package that does not load.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// publicPackages are the packages whose API is promised (relative to the
// module): every package outside internal/ but the commands, benchmarks
// and the SDKs of other languages.
var publicPackages = []string{
	"admin", "capability", "contribution", "distribute", "generation", "kernel",
	"kernel/config", "kernel/hostcap", "kernel/observe", "pluginpkg",
	"protocol", "sdk", "sdk/sdktest", "sidecar",
}

// Names of the API files under the api directory.
const (
	baseFile = "v0.txt"
	nextFile = "v0.next.txt"
)

// options configures one run of the gate.
type options struct {
	dir       string   // the module's root
	pkgs      []string // its public packages, relative to dir
	write     bool     // rewrite the additions file
	freeze    bool     // rewrite the release's file, empty the additions
	apiDir    string   // where the API files are; default dir/api
	changelog string   // default dir/CHANGELOG.md
}

func main() {
	var o options
	flag.StringVar(&o.dir, "dir", ".", "the module's root directory")
	flag.BoolVar(&o.write, "write", false, "record the code's additions in api/"+nextFile)
	flag.BoolVar(&o.freeze, "freeze", false, "at a release: record the code's API as api/"+baseFile)
	pkgs := flag.String("pkgs", strings.Join(publicPackages, ","), "the public packages, comma-separated, relative to -dir")
	flag.Parse()
	if flag.NArg() != 0 || o.write && o.freeze {
		fmt.Fprintln(os.Stderr, "usage: apigate [-write | -freeze] [-dir dir] [-pkgs list]")
		os.Exit(2)
	}
	o.pkgs = strings.Split(*pkgs, ",")
	ok, err := run(o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigate:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// run runs the gate, printing its findings to w; ok is false when the
// gate fails, err non-nil when it could not run.
func run(o options, w io.Writer) (ok bool, err error) {
	if o.apiDir == "" {
		o.apiDir = filepath.Join(o.dir, "api")
	}
	if o.changelog == "" {
		o.changelog = filepath.Join(o.dir, "CHANGELOG.md")
	}
	cur, module, err := extract(o.dir, o.pkgs)
	if err != nil {
		return false, err
	}
	basePath, nextPath := filepath.Join(o.apiDir, baseFile), filepath.Join(o.apiDir, nextFile)
	if o.freeze {
		if err := os.MkdirAll(o.apiDir, 0o755); err != nil {
			return false, err
		}
		if err := writeAPI(basePath, header(module, "the API of the last release"), lines(cur, nil)); err != nil {
			return false, err
		}
		return true, writeAPI(nextPath, header(module, "the API added since "+baseFile), nil)
	}
	base, err := readAPI(basePath)
	if err != nil {
		return false, err
	}
	if len(base.lines) == 0 {
		return false, fmt.Errorf("%s: no API recorded (run the gate with -freeze)", basePath)
	}
	if o.write {
		if err := writeAPI(nextPath, header(module, "the API added since "+baseFile), lines(cur, base.lines)); err != nil {
			return false, err
		}
	}
	next, err := readAPI(nextPath)
	if err != nil {
		return false, err
	}
	log, err := os.ReadFile(o.changelog)
	if err != nil && !os.IsNotExist(err) {
		return false, err
	}
	r := compare(cur, module, base, next, breakingNames(log))
	for _, l := range r.allowed {
		fmt.Fprintf(w, "allowed by CHANGELOG.md: %s\n", l)
	}
	if !r.ok() {
		fmt.Fprintf(w, "apigate: the exported API differs from api/%s and api/%s:\n%s", baseFile, nextFile, r)
		return false, nil
	}
	fmt.Fprintf(w, "apigate: the %d API lines of %d packages match api/ (%d added since %s)\n",
		len(cur), len(o.pkgs), len(next.lines), baseFile)
	return true, nil
}

// header returns an API file's comment lines.
func header(module, what string) []string {
	return []string{
		"module " + module,
		strings.ToUpper(what[:1]) + what[1:] + ", GOOS=linux GOARCH=amd64.",
		"Written by go run ./internal/apigate; see docs/compatibility.md.",
	}
}

// lines returns the lines of the features that skip lacks.
func lines(fs []feature, skip map[string]bool) []string {
	var out []string
	for _, f := range fs {
		if !skip[f.line] {
			out = append(out, f.line)
		}
	}
	return out
}
