//go:build !unix

package sdktest

// groupMembers reports ok false: there are no process groups to inspect
// here (and no plugin runs: process.Supported fails first).
func groupMembers(int) (members []string, ok bool) { return nil, false }
