package api

// top 2 on windows
func OnWindows() {}

// fields 0: unexported
type handle struct{ Value uintptr }

var H handle
