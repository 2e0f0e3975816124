package pluginpkg

import (
	"path/filepath"
	"strings"
)

// Install installs the package at src, a package directory or an archive,
// with InstallSource's checks and steps and the default options, and
// returns the installed package (enabled).
//
// It returns the manifest's *ValidationError when the manifest is invalid,
// a *SourceError when the source breaks a rule, and an error wrapping
// ErrAlreadyInstalled when a different package of that name is installed;
// installing exactly the installed files again succeeds and changes
// nothing. A failed install leaves no partial package.
func Install(home, src string) (*Package, error) {
	res, err := InstallSource(home, src, InstallOptions{})
	if err != nil {
		return nil, err
	}
	return res.Package, nil
}

// within reports whether path is dir or inside it (both cleaned, absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
