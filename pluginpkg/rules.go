package pluginpkg

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/internal/ident"
	"github.com/extkernel/extkernel/internal/pkgfiles"
	"github.com/extkernel/extkernel/internal/wire"
)

// Limits of the manifest schema. docs/manifest.md documents each.
const (
	// MaxManifestSize is the largest manifest Parse accepts, in bytes.
	MaxManifestSize = 1 << 20
	// MaxNameLen is the longest package name, in bytes.
	MaxNameLen = 64
	// ReservedEnvPrefix starts the environment variables the kernel sets for
	// a sidecar; a manifest may not set them.
	ReservedEnvPrefix = "EXTKERNEL_"
)

// The rule functions below return "" when a value is valid, or a message
// that can follow the value's field path. Parse and Manifest.Validate share
// them, so a parsed manifest always re-validates.

// ValidateName reports whether name is a valid package name: 1 to 64 bytes
// of [a-z0-9._-], starting with a lower-case letter or digit.
func ValidateName(name string) error {
	if msg := checkName(name); msg != "" {
		return errors.New(msg)
	}
	return nil
}

func checkName(name string) string {
	const rule = "use 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit"
	if name == "" {
		return "must not be empty (" + rule + ")"
	}
	if len(name) > MaxNameLen {
		return fmt.Sprintf("%q is not a valid package name: longer than %d bytes", name, MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		lowerOrDigit := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !lowerOrDigit && (i == 0 || c != '.' && c != '_' && c != '-') {
			return fmt.Sprintf("%q is not a valid package name (%s)", name, rule)
		}
	}
	return ""
}

// The messages of provides[].methods rules that span more than one value.
const (
	noMethods                 = "must list at least one method (omit methods for a capability with no callable methods)"
	methodsWithoutRuntime     = "a package without a runtime has no providers to implement methods"
	permissionsWithoutRuntime = "a package without a runtime has no process to confine"
)

// checkMethod checks one provides[].methods member: the method name is an
// identifier and the ref a provider ref (docs/protocol.md §4.5).
func checkMethod(name, ref string) string {
	if err := ident.ValidateDotted("method name", name); err != nil {
		return err.Error()
	}
	if err := contribution.ValidateProviderRef(ref); err != nil {
		return err.Error()
	}
	return ""
}

func checkFormat(format int64) string {
	switch {
	case format == FormatVersion:
		return ""
	case format > FormatVersion:
		return newerFormat(strconv.FormatInt(format, 10))
	default:
		return fmt.Sprintf("unsupported format %d (this build reads format %d)", format, FormatVersion)
	}
}

func newerFormat(text string) string {
	return fmt.Sprintf("this manifest needs a newer extkernel (format %s, this build reads %d)", text, FormatVersion)
}

// parseVersion parses a strict semantic version: MAJOR.MINOR.PATCH with
// optional pre-release and build metadata, no "v" prefix, no leading zeros.
func parseVersion(s string) (*semver.Version, string) {
	v, err := semver.StrictNewVersion(s)
	if err == nil {
		return v, ""
	}
	var why string
	switch {
	case s == "":
		return nil, "must not be empty (use MAJOR.MINOR.PATCH such as \"1.0.0\")"
	case strings.HasPrefix(s, "v") || strings.HasPrefix(s, "V"):
		why = "drop the leading \"v\""
	case errors.Is(err, semver.ErrInvalidSemVer), errors.Is(err, semver.ErrInvalidCharacters):
		why = "use MAJOR.MINOR.PATCH such as \"1.0.0\""
	case errors.Is(err, strconv.ErrRange):
		why = "number out of range"
	default:
		why = err.Error()
	}
	return nil, fmt.Sprintf("%q is not a valid semantic version: %s", s, why)
}

// parseConstraint parses a semver constraint such as "^1.2", ">=1.0, <2" or
// "1.x || 2.x".
func parseConstraint(s string) (*semver.Constraints, string) {
	if strings.TrimSpace(s) == "" {
		return nil, "must not be empty (use \"*\" for any version)"
	}
	c, err := semver.NewConstraint(s)
	if err == nil {
		return c, ""
	}
	if errors.Is(err, semver.ErrConstraintTooLong) || errors.Is(err, semver.ErrTooManyConstraintGroups) {
		return nil, fmt.Sprintf("%q is not a valid semver constraint: %v", s, err)
	}
	return nil, fmt.Sprintf("%q is not a valid semver constraint", s)
}

// checkCommand enforces the command rules: not empty, relative, and not
// escaping the package directory once cleaned.
func checkCommand(cmd string) string {
	switch {
	case cmd == "":
		return "must not be empty"
	case strings.ContainsRune(cmd, 0):
		return "must not contain a NUL byte"
	case !utf8.ValidString(cmd):
		return notUTF8
	case filepath.IsAbs(cmd) || strings.HasPrefix(cmd, "/"):
		return fmt.Sprintf("%q is an absolute path; use a path relative to the package directory (such as \"./bin/plugin\") or a bare command name looked up on PATH", cmd)
	case !pkgfiles.IsRelativeCommand(cmd):
		return ""
	}
	clean := filepath.Clean(cmd)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Sprintf("%q escapes the package directory", cmd)
	}
	if clean == "." {
		return fmt.Sprintf("%q names the package directory itself, not an executable", cmd)
	}
	return ""
}

func checkEnvName(k string) string {
	if k == "" {
		return "environment variable name must not be empty"
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return fmt.Sprintf("%q is not a valid environment variable name (use letters, digits and '_', not starting with a digit)", k)
		}
	}
	if strings.HasPrefix(k, ReservedEnvPrefix) {
		return fmt.Sprintf("%q is reserved: the kernel sets %s* variables itself", k, ReservedEnvPrefix)
	}
	return ""
}

// checkText enforces the rules of a string passed to the sidecar (args, env
// values): no NUL byte, and valid UTF-8 (Parse reports invalid bytes with
// their position before this rule runs; Validate needs it for manifests
// built in code).
func checkText(s string) string {
	switch {
	case strings.ContainsRune(s, 0):
		return "must not contain a NUL byte"
	case !utf8.ValidString(s):
		return notUTF8
	}
	return ""
}

// notUTF8 is Validate's message for a string holding bytes that are not UTF-8.
const notUTF8 = "is not valid UTF-8; a manifest must be UTF-8"

func checkPriority(p int64) string {
	if p < contribution.MinPriority || p > contribution.MaxPriority {
		return fmt.Sprintf("must be between %d and %d, got %d", contribution.MinPriority, contribution.MaxPriority, p)
	}
	return ""
}

// parseTimeout parses a handshake timeout: a Go duration in (0, 60s].
func parseTimeout(s string) (time.Duration, string) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Sprintf("%q is not a valid duration (use Go syntax such as \"5s\" or \"1m30s\")", s)
	}
	return d, checkTimeout(d, strconv.Quote(s))
}

func checkTimeout(d time.Duration, text string) string {
	switch {
	case d <= 0:
		return fmt.Sprintf("must be greater than 0, got %s", text)
	case d > wire.MaxHandshakeTimeout:
		return fmt.Sprintf("must be at most %ds, got %s", wire.MaxHandshakeTimeout/time.Second, text)
	}
	return ""
}

// anyVersion returns the constraint "*", the default of requires[].version.
func anyVersion() *semver.Constraints {
	c, _ := semver.NewConstraint("*")
	return c
}
