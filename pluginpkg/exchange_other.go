//go:build !linux

package pluginpkg

// exchangeDirs would swap a and b atomically; outside Linux there is no
// portable call for it, so callers always fall back to two renames.
func exchangeDirs(a, b string) error { return errNoExchange }
