// Package api is a fixture: the comments say what each declaration counts.
package api

import "io"

// top 2 (A, B; c is unexported)
const (
	A = iota
	B
	c
)

// top 1 (V)
var V, w int

// top 1, fields 3 (X, Y and the embedded io.Reader; z and embedded inner not)
type S struct {
	X, Y int
	z    int
	io.Reader
	inner
	Nested struct{ Deep int } // fields 1 (Nested; Deep is one level too deep)
}

// methods 2 (M on S, P on *S; q is unexported)
func (S) M()  {}
func (*S) P() {}
func (S) q()  {}

type inner struct{ Hidden int } // nothing: unexported type

// nothing: methods of an unexported type
func (inner) Promoted() {}

// top 1, methods 1 (Get on a generic type)
type G[T any] struct{ v T }

func (g *G[T]) Get() T { return g.v }

// top 1, iface 2 (Read and Write; the embedded io.Closer and m are not)
type I interface {
	io.Closer
	Read() int
	Write(int)
	m()
}

// top 1 (an alias: its fields are the aliased type's)
type Alias = S

// top 1 (a defined type over a struct type's name: no fields of its own)
type Defined S

// top 1
func F() {}

func f() {}
