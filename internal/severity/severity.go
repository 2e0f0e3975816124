// Package severity holds the one Severity shared by the problem lists of
// packages capability and contribution. Both re-export it as an alias
// (capability.Severity and contribution.Severity are this type), so a host
// handles problems from either with one type and one pair of constants.
// It lives here because neither package imports the other.
package severity

// Severity says whether a problem stops what reported it: an Error fails
// the build or resolution, a Warning is reported and the work goes on.
type Severity int

// Severities. The zero Severity is Error.
const (
	// Error problems fail the build or resolution that found them.
	Error Severity = iota
	// Warning problems are reported; the work that found them succeeds.
	Warning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}
