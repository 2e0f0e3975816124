// Package node embeds the Node.js SDK, the one file extkernel.js beside
// this one, for tools that copy it into a new plugin package (`kernelctl
// new --lang node`). The .js file is the SDK and its only copy; this
// package adds nothing to it.
package node

import (
	"bytes"
	_ "embed"
)

// FileName is the SDK's file name; a plugin requires it as ./extkernel.
const FileName = "extkernel.js"

//go:embed extkernel.js
var source []byte

// Source returns the content of extkernel.js, a copy the caller may keep.
func Source() []byte { return bytes.Clone(source) }
