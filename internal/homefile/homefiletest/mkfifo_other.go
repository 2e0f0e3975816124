//go:build !unix

package homefiletest

import "errors"

func mkfifo(string) error { return errors.New("FIFOs are not supported on this system") }
