package capability

import (
	"fmt"
	"testing"
)

// benchRequest builds n packages deterministically: package i provides
// cap.i at 1.(i%10).0 and requires cap.(i-1), cap.(i/2) and cap.(i/3) with
// ^1 constraints, the last one optional for every fourth package. Package
// 0 requires nothing. Every package is enabled and Roots is empty, so the
// closure holds all n packages and 3(n-1) choices.
func benchRequest(n int) Request {
	caret1 := con("^1")
	req := Request{Packages: make([]Package, n)}
	for i := range n {
		p := Package{
			Name:     fmt.Sprintf("pkg%06d", i),
			Version:  ver("1.0.0"),
			Enabled:  true,
			Provides: []Provided{{Key: Key(fmt.Sprintf("cap.%d", i)), Version: ver(fmt.Sprintf("1.%d.0", i%10))}},
		}
		if i > 0 {
			for j, dep := range []int{i - 1, i / 2, i / 3} {
				p.Requires = append(p.Requires, Requirement{
					Key:        Key(fmt.Sprintf("cap.%d", dep)),
					Constraint: caret1,
					Optional:   j == 2 && i%4 == 0,
				})
			}
		}
		req.Packages[i] = p
	}
	return req
}

func BenchmarkResolve(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		req := benchRequest(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := Resolve(req)
				if err != nil || len(c.Members) != n || len(c.Problems) != 0 {
					b.Fatalf("unexpected closure: err=%v members=%d problems=%d", err, len(c.Members), len(c.Problems))
				}
			}
		})
	}
}

// BenchmarkResolveFloor measures the irreducible work on the same input:
// one map from key to provided version, then one lookup and one constraint
// check per requirement. It is the floor BenchmarkResolve is read against.
func BenchmarkResolveFloor(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		req := benchRequest(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				index := make(map[Key]Provided, n)
				for _, p := range req.Packages {
					for _, pr := range p.Provides {
						index[pr.Key] = pr
					}
				}
				satisfied := 0
				for _, p := range req.Packages {
					for _, r := range p.Requires {
						if pr, ok := index[r.Key]; ok && r.Constraint.Check(pr.Version) {
							satisfied++
						}
					}
				}
				if satisfied != 3*(n-1) {
					b.Fatalf("satisfied %d requirements, want %d", satisfied, 3*(n-1))
				}
			}
		})
	}
}
