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
// # Validation
//
// Config.Validate is the one check of a Config's values (ranges, IDs,
// names, policies, kinds, handlers): Parse applies it to what a file
// holds, and kernel.New and Reconfigure to the Config they are given, so a
// value breaks a rule in the same words whether it was written in a file
// or set in Go. Parse itself checks only what a file alone can get wrong:
// unknown keys, JSON types, durations and versions that do not parse, the
// format, and limits that are not positive integers.
//
// # Errors
//
// Load, Parse and Validate report problems as one *Error (use errors.As),
// every problem with its key path as the file spells it
// ("supervision.hang_timeout: ..."); Path is the file, empty for Validate.
// Load's failure to read the file is an error wrapping the cause.
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
