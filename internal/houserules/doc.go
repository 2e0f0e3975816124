// Package houserules holds, as tests, the rules of the house that span
// packages and that no single package can check for itself. It has no
// code: go test ./internal/houserules runs them.
//
// # Error prefixes
//
// An error says its subject first ("plugin \"redactor\": handshake: ...",
// "packages/x/plugin.json: requires[1]: ..."). A public package whose
// error leaves it without a subject names itself once, at the boundary a
// host calls ("kernel: config: ...", "admin: listen ...", "config: ...");
// a public package that wraps another's error does not repeat that
// prefix. An internal package never names itself or its path: a host
// cannot import it, so "wire: ..." or "internal/pkgfiles: ..." would tell
// the host about a room it cannot open. Its errors start with their
// subject, and the public package that returns them adds what the host
// needs.
//
// # Public rooms stay public
//
// No exported declaration of a public package names a package of the
// internal tree (an alias, which gives the internal type a public name,
// excepted): a package is slimmed, never got under its size by hiding a
// type in internal/ while its API still hands that type out.
package houserules
