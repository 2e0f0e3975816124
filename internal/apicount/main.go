// Command apicount prints, per package of a module, how many exported
// identifiers its non-test files declare, so that the size of the public
// surface can be compared between two commits:
//
//	go run ./internal/apicount [-goos linux] [-names] [root]
//
// root (default ".") is the module's directory; every package below it is
// counted, except main packages, testdata, hidden directories and nested
// modules (a directory with its own go.mod, such as bench/goplugin).
//
// The columns, for one package:
//
//   - top: exported top-level names (constants, variables, types,
//     functions; each name of a grouped declaration counts once);
//   - methods: exported methods declared on exported types (a receiver of
//     type T or *T, generic or not);
//   - iface: exported methods declared in exported interface types;
//   - fields: exported fields of exported struct types, embedded exported
//     types included, one level deep (the fields of an anonymous struct
//     type are not counted);
//   - total: top + methods + fields, the measure issue 12 quotes (iface
//     is shown apart, so that a reader can add it).
//
// With -names, it prints instead every name the total counts, one per
// line after its package's directory and a tab, sorted: "Name" for a
// top-level name, "Type.Method", "Type.Field". Two such lists, from two
// commits, show with comm(1) which names one has and the other has not.
//
// Files are selected as `go build` would select them for -goos (default
// linux) and the host's architecture, so a name declared once per OS in
// build-tagged files counts once. Methods promoted from embedded types and
// exported names reachable only through unexported types are not counted.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
)

func main() {
	goos := flag.String("goos", "linux", "count the files `go build` selects for this GOOS")
	names := flag.Bool("names", false, "list every name counted, one per line, instead of the table")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: apicount [-goos os] [-names] [module root]")
		flag.PrintDefaults()
	}
	flag.Parse()
	root := "."
	switch flag.NArg() {
	case 0:
	case 1:
		root = flag.Arg(0)
	default:
		flag.Usage()
		os.Exit(2)
	}
	counts, err := countTree(root, *goos)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(1)
	}
	if *names {
		writeNames(os.Stdout, counts)
		return
	}
	write(os.Stdout, counts)
}

// writeNames prints each package's names, sorted, one per line after the
// package's directory and a tab.
func writeNames(w io.Writer, counts []count) {
	for _, c := range counts {
		for _, name := range slices.Sorted(slices.Values(c.names)) {
			fmt.Fprintf(w, "%s\t%s\n", c.dir, name)
		}
	}
}

// write prints counts as a table, public packages first, then internal
// ones, each group followed by its sum.
func write(w io.Writer, counts []count) {
	fmt.Fprintf(w, "%-32s %5s %7s %5s %6s %5s\n", "package", "top", "methods", "iface", "fields", "total")
	for _, internal := range []bool{false, true} {
		sum := count{dir: "(public)"}
		if internal {
			sum.dir = "(internal)"
		}
		n := 0
		for _, c := range counts {
			if c.internal() != internal {
				continue
			}
			writeRow(w, c)
			sum.add(c)
			n++
		}
		if n > 0 {
			writeRow(w, sum)
		}
	}
}

func writeRow(w io.Writer, c count) {
	fmt.Fprintf(w, "%-32s %5d %7d %5d %6d %5d\n", c.dir, c.top, c.methods, c.iface, c.fields, c.total())
}
