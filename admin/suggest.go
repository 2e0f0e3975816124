package admin

import (
	"fmt"
	"slices"
)

// didYouMean is ` (did you mean "x"?)` for the candidate closest to name
// (by edit distance, then in sorted order), or "" when none is close: at
// most 2 edits away, or a fifth of name's length for a longer name.
func didYouMean(name string, candidates []string) string {
	best, bestDist := "", max(2, len(name)/5)+1
	for _, c := range slices.Sorted(slices.Values(candidates)) {
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" || best == name {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
