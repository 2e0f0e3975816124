//go:build !unix

package confine

import (
	"errors"
	"os"
)

// openDir opens dir.
func openDir(dir string) (*os.File, error) { return os.Open(dir) }

// lockDir is unsupported here: every ${tmp} is made and removed.
func lockDir(*os.File) error { return errors.ErrUnsupported }
