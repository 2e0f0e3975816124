// Package generation builds one runtime generation (closure, clients,
// registry, warnings), plans and diffs between two, and applies a plan with
// adoption and rollback. It never owns the "current" pointer; package kernel
// does. It is built in a later layer; this file reserves the package.
package generation
