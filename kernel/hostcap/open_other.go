//go:build !unix

package hostcap

import "os"

// openFlags opens a file to read.
const openFlags = os.O_RDONLY
