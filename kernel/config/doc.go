// Package config is the one description of what a host tells the kernel:
// the Config value kernel.New takes, and the kernel.json file (format 1)
// that Load and Parse read into one (docs/config.md).
//
// # One schema
//
// Config is the schema. The file's keys are the json tags of one private
// mirror of it (file.go), the only list of them: a key the mirror does not
// name is reported as unknown, a value of the wrong JSON type with its line
// and column, and then every value is checked. Parse never stops at the
// first problem: every problem is reported, each with its key path, in one
// *Error. The file is read through the module's one bounded reader of home
// files: Load refuses a file larger than MaxFileSize, or one that is not a
// regular file, without reading it.
//
// Some fields have no key: Handlers, Observer and Logger, which a file
// cannot hold, and StreamWindow and FirstGeneration, which only an
// embedding program sets. A host sets them in Go.
//
// # Defaults
//
// The zero value of every optional field means its default, documented on
// the field and in docs/config.md. This package never fills defaults in:
// the kernel applies each one, once, when New or Reconfigure takes the
// config, so that a Config read from a file and one built in Go get the
// same defaults. Parse makes relative paths (home, data_root) absolute
// against the file's directory.
//
// # Ownership
//
// A Config is a plain value. New and Reconfigure copy the maps the kernel
// keeps reading (Handlers, Session); the host must not change the others
// (Policy, PluginEnv, ...) while a kernel uses the Config.
package config
