//go:build linux

package confine

// Command returns path and args unchanged: on Linux the plugin is forked
// from a confined thread (Start), nothing runs before it.
func Command(_ *Policy, path string, args []string) (string, []string) { return path, args }
