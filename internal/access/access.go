// Package access holds the token that opens the accessors of exported
// types which only code inside this module may call.
//
// generation.Generation and generation.Member hold the sidecar clients of a
// generation. A host that called a plugin through one of them would skip
// the kernel's leases and drain rules, so those accessors take a Token: a
// host cannot name this package, and a Token it made by reflection is the
// zero Token, which the accessors refuse. Code of this module passes Grant.
package access

// Token opens a module-internal accessor. Only Grant is valid.
type Token struct{ granted bool }

// Grant is the valid Token.
var Grant = Token{granted: true}

// Check panics, naming what, unless t is Grant.
func (t Token) Check(what string) {
	if !t.granted {
		panic(what + ": called without the module's access token")
	}
}
