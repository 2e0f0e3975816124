package api

// nothing: a test file
func Exported() {}

type T struct{ Field int }
