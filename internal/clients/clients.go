// Package clients keeps the sidecar client of a generation member where
// only this module reaches it.
//
// A call through a member's client would skip the kernel's leases and
// drain rules, so package generation names no client in its exported API:
// generation.Member embeds a Holder under an unexported name, and Of and
// Set take the unexported interface its promoted method satisfies. A host
// can neither import this package nor name that interface, so no code
// outside this module can read or set a member's client; inside it,
// package generation sets and reads the clients it starts, adopts and
// stops, and package kernel reads them to dispatch under a lease, to
// supervise them and to adopt them at a reload or restart.
//
// Server carries the kernel's handler of the plugins' capability/call
// requests the same way, embedded in generation.ClientOptions: package
// kernel sets it, package generation hands it to every sidecar it starts.
//
// # Concurrency
//
// A Holder is set while its generation is built, before the generation is
// published, and only read afterwards; reads need no lock. A Server is set
// before the build that reads it.
package clients

import "github.com/extkernel/extkernel/sidecar"

// Holder holds one member's client, nil when the member does not run. Its
// zero value holds none. It is embedded, never used on its own.
type Holder struct{ client *sidecar.Client }

// holder returns h; promoted through the embedding, it makes the embedding
// type satisfy holding.
func (h *Holder) holder() *Holder { return h }

// holding is satisfied by a pointer to any struct that embeds a Holder.
type holding interface{ holder() *Holder }

// Of returns the client x holds, or nil. x MUST NOT be a nil pointer.
func Of(x holding) *sidecar.Client { return x.holder().client }

// Set makes x hold c (nil: none). Only the builder of x's generation sets
// it, before the generation is published.
func Set(x holding, c *sidecar.Client) { x.holder().client = c }
