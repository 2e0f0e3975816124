// Package contribution defines what plugins contribute to a host: typed
// identifiers for the places they contribute to (Point, Slot), and, in a later
// layer, the contribution kinds, their conflict policies and the immutable
// indexed registry snapshot built from them.
//
// The package never talks to processes: it turns declarations into validated
// data.
package contribution
