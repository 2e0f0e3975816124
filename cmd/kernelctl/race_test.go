//go:build race

package main

// raceEnabled: the test binary, and so the kernelctl the tests run, is
// built with the race detector, which multiplies memory use.
const raceEnabled = true
