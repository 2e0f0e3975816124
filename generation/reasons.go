package generation

import (
	"fmt"
	"sort"
	"strings"

	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/pluginpkg"
)

// namedFiles is how many changed files a reason names before "and N more".
const namedFiles = 3

// fileReasons says what changed in a package's files and runtime command
// between two fingerprints of a runtime package:
//
//   - "package files changed (a.py, b.py, c.py and 2 more)": the files that
//     differ, were added or were removed, the manifest left out (it has a
//     reason of its own); without per-file digests on either side, only
//     "package files changed";
//   - "package files cannot be digested (<error>)", when they cannot;
//   - "interpreter changed (/usr/bin/python3)": a bare command now resolves
//     to different content (where it was found does not matter);
//   - "executable changed": a command of the package changed, or could not
//     be resolved, and no file reason names it already;
//   - "package files not recorded in generation N": a snapshot of an
//     earlier version, which fingerprinted the executable by size and
//     modification time only; the member is restarted once.
func fileReasons(from uint64, fa, fb Fingerprint) []string {
	if fa.Files == "" && fb.Files != "" {
		return []string{fmt.Sprintf("package files not recorded in generation %d", from)}
	}
	var r []string
	if fa.Files != fb.Files {
		r = append(r, filesReason(fa, fb)...)
	}
	if fa.Executable == fb.Executable {
		return r
	}
	switch {
	case fb.Interpreter != "" && strings.HasPrefix(fb.Executable, "sha256:"):
		r = append(r, fmt.Sprintf("interpreter changed (%s)", fb.Interpreter))
	case len(r) == 0:
		r = append(r, "executable changed")
	}
	return r
}

// filesReason describes two different files digests; it is empty when only
// the manifest differs.
func filesReason(fa, fb Fingerprint) []string {
	if bad, ok := strings.CutPrefix(fb.Files, "unreadable: "); ok {
		return []string{fmt.Sprintf("package files cannot be digested (%s)", bad)}
	}
	if fa.FileDigests == nil || fb.FileDigests == nil {
		return []string{"package files changed"}
	}
	changed := pkgfiles.ChangedFiles(fa.FileDigests, fb.FileDigests)
	if i := sort.SearchStrings(changed, pluginpkg.ManifestFile); i < len(changed) && changed[i] == pluginpkg.ManifestFile {
		changed = append(changed[:i], changed[i+1:]...)
	}
	switch n := len(changed); {
	case n == 0:
		return nil
	case n > namedFiles:
		return []string{fmt.Sprintf("package files changed (%s and %d more)", strings.Join(changed[:namedFiles], ", "), n-namedFiles)}
	default:
		return []string{fmt.Sprintf("package files changed (%s)", strings.Join(changed, ", "))}
	}
}
