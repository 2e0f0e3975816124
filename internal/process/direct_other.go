//go:build !linux || extkernel_portable

package process

import "os"

// Portable reports whether this build uses the portable fallbacks (see
// the package documentation, "Platforms").
const Portable = true

// DirectWriter is never made here: every frame goes through the client's
// writer goroutine.
type DirectWriter struct{}

// NewDirectWriter returns nil here.
func NewDirectWriter(*os.File) *DirectWriter { return nil }

// Write writes nothing.
func (*DirectWriter) Write([]byte) int { return 0 }
