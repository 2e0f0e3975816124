// Package pluginpkg owns plugin packages on disk: the plugin.json manifest
// schema, its parsing and validation with field paths, and the installed state
// of a home directory (enabled, disabled, pinned checksums).
//
// It never starts processes.
package pluginpkg
