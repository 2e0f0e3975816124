// Package semverstr formats a semantic version as
// github.com/Masterminds/semver/v3's Version.String does, without fmt: a
// build formats every member's version several times (its fingerprint,
// its published declarations, its contributions' source), and String's
// fmt.Fprintf calls were a tenth of publishing 64 lazy members.
package semverstr

import (
	"strconv"

	"github.com/Masterminds/semver/v3"
)

// String returns v as Version.String does: MAJOR.MINOR.PATCH, then
// "-" and the pre-release and "+" and the metadata when v has them.
func String(v *semver.Version) string {
	b := make([]byte, 0, 16+len(v.Prerelease())+len(v.Metadata()))
	b = strconv.AppendUint(b, v.Major(), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, v.Minor(), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, v.Patch(), 10)
	if pre := v.Prerelease(); pre != "" {
		b = append(b, '-')
		b = append(b, pre...)
	}
	if meta := v.Metadata(); meta != "" {
		b = append(b, '+')
		b = append(b, meta...)
	}
	return string(b)
}
