// Package lib is the API gate's fixture: its tests remove and change these
// names and expect the gate to fail.
package lib

import (
	"context"
	"io"
)

// Version is a constant.
const Version = "1.0.0"

// Default is a variable.
var Default = &Box[int]{}

// Remove is removed by a test.
func Remove() {}

// Change has its signature changed by a test.
func Change(ctx context.Context, n int) (string, error) { return "", nil }

// Map is generic.
func Map[T any, U comparable](in []T, f func(elem T) U) []U { return nil }

// Box is a generic struct with an embedded field.
type Box[T any] struct {
	io.Reader
	Value  T
	hidden int
}

// Get returns the value.
func (b *Box[T]) Get() T { return b.Value }

// Source is an interface.
type Source interface {
	Read(ctx context.Context, name string) ([]byte, error)
	Close() error
}

// Kind is a defined string type.
type Kind string

// Alias is an alias.
type Alias = Kind

// Options is a struct whose field a test removes.
type Options struct {
	Name    string
	OnEvent func(kind Kind, data ...byte)
}
