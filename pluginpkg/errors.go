package pluginpkg

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is one validation problem: the JSON field path it is about and a
// message that can follow that path, such as
// {Field: `requires[1].version`, Message: `"~2.x.y" is not a valid semver constraint`}.
// Field is empty for problems about the whole document (invalid JSON, an
// empty file).
type FieldError struct {
	Field   string
	Message string
}

// String formats the problem as "field: message", or just the message when
// Field is empty.
func (e FieldError) String() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// ValidationError reports every problem found in one manifest. Problems are
// in document order (the order the fields appear in the file), followed by
// missing required fields and cross-field problems; the order is
// deterministic for a given input.
type ValidationError struct {
	// Path names the manifest in messages; it is the path given to Parse.
	Path     string
	Problems []FieldError
}

// Error returns one line per problem, "path: field: message", joined by
// newlines. When Path is empty the lines start with the field.
func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.Path != "" {
			b.WriteString(e.Path)
			b.WriteString(": ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// ErrNotInstalled is returned (wrapped; test with errors.Is) by Enable,
// Disable, Pin, Remove, RemoveChecked, DisableChecked and (for a name that
// cannot be a package) Rollback when no package of that name is installed in the
// home. The message names the package and the home.
var ErrNotInstalled = errors.New("not installed")

// ErrAlreadyInstalled is returned (wrapped) by Install, and by
// InstallSource and PreviewInstall without InstallOptions.Upgrade, when the
// home already has a package of the manifest's name whose files differ.
// The message names the package, the home and both versions. Installing
// exactly the installed files again is no error.
var ErrAlreadyInstalled = errors.New("already installed")

// ErrCorruptState is matched (errors.Is) by the *StateError returned when
// <home>/state.json cannot be decoded or breaks its schema. The file is never
// silently replaced: writers refuse to touch a corrupt state file too.
var ErrCorruptState = errors.New("corrupt state file")

// StateError reports a corrupt state file: its path, the position of the
// problem when JSON decoding found one, and the reason. It matches
// ErrCorruptState with errors.Is.
type StateError struct {
	// Path is the state file's path.
	Path string
	// Line and Column locate the problem (1-based); both are zero when the
	// problem has no single position (for example an unsupported format).
	Line, Column int
	// Reason describes the problem.
	Reason string
	// Err is the underlying decoding error, if any.
	Err error
}

// Error formats the problem as "path: corrupt state file at line L, column
// C: reason".
func (e *StateError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s: corrupt state file at line %d, column %d: %s", e.Path, e.Line, e.Column, e.Reason)
	}
	return fmt.Sprintf("%s: corrupt state file: %s", e.Path, e.Reason)
}

// Unwrap returns the underlying decoding error.
func (e *StateError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorruptState.
func (e *StateError) Is(target error) bool { return target == ErrCorruptState }

// notInstalled builds the ErrNotInstalled error for name in home.
func notInstalled(home, name string) error {
	return fmt.Errorf("package %q in %s: %w", name, home, ErrNotInstalled)
}
