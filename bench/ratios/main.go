// Command ratios prints, for pairs of benchmarks, the median and range over
// rounds of the ratio of one metric of the two, each ratio taken within one
// round. A round is one `go test -bench` run (its output starts with a
// "goos:" line); BENCHMARKS.md (## sidecar) runs several rounds into one
// file, so that both sides of a ratio ran within a minute of each other.
//
// Usage:
//
//	go run ./bench/ratios [-unit ns/op] FILE A:B...
//
// A and B are benchmark names without the "Benchmark" prefix and the
// GOMAXPROCS suffix, e.g. RoundTrip/client:RoundTrip/jsonfloor.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var line = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

func main() {
	unit := flag.String("unit", "ns/op", "the metric compared")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: ratios [-unit U] FILE A:B...")
		os.Exit(2)
	}
	rounds, err := read(flag.Arg(0), *unit)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, pair := range flag.Args()[1:] {
		a, b, ok := strings.Cut(pair, ":")
		if !ok {
			fmt.Fprintf(os.Stderr, "%q: want A:B\n", pair)
			os.Exit(2)
		}
		var rs []float64
		for _, r := range rounds {
			if x, y := r[a], r[b]; x > 0 && y > 0 {
				rs = append(rs, x/y)
			}
		}
		if len(rs) == 0 {
			fmt.Printf("%s / %s: no round has both\n", a, b)
			continue
		}
		slices.Sort(rs)
		fmt.Printf("%s / %s (%s): %.2f (%.2f–%.2f, %d rounds)\n", a, b, *unit, median(rs), rs[0], rs[len(rs)-1], len(rs))
	}
}

// read returns, per round, each benchmark's value of unit.
func read(path, unit string) ([]map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rounds []map[string]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "goos:") {
			rounds = append(rounds, map[string]float64{})
			continue
		}
		m := line.FindStringSubmatch(sc.Text())
		if m == nil || len(rounds) == 0 {
			continue
		}
		fields := strings.Fields(m[2])
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i+1] == unit {
				if v, err := strconv.ParseFloat(fields[i], 64); err == nil {
					rounds[len(rounds)-1][m[1]] = v
				}
			}
		}
	}
	return rounds, sc.Err()
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
