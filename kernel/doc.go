// Package kernel is the host-facing facade of extkernel: configuration, the
// atomically swapped current runtime generation, reload, dispatch, and
// supervision wiring. It is built in a later layer; this file reserves the
// package.
package kernel
