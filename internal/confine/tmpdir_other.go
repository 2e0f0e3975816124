//go:build !unix

package confine

import (
	"errors"
	"os"
)

// canKeep: a kept ${tmp} cannot be locked here, so HoldTmp never makes
// one and every ${tmp} is made and removed.
const canKeep = false

// openDir opens dir.
func openDir(dir string) (*os.File, error) { return os.Open(dir) }

// lockDir is unsupported here: every ${tmp} is made and removed.
func lockDir(*os.File) error { return errors.ErrUnsupported }
