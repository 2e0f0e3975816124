// Package python embeds the Python SDK, the one file extkernel.py beside
// this one, for tools that copy it into a new plugin package (`kernelctl
// new --lang python`). The .py file is the SDK and its only copy; this
// package adds nothing to it.
package python

import (
	"bytes"
	_ "embed"
)

// FileName is the SDK's file name; a plugin imports it as module extkernel.
const FileName = "extkernel.py"

//go:embed extkernel.py
var source []byte

// Source returns the content of extkernel.py, a copy the caller may keep.
func Source() []byte { return bytes.Clone(source) }
