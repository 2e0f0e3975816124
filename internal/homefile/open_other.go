//go:build !unix

package homefile

// openNonblock is not needed where FIFOs cannot block an open.
const openNonblock = 0
