//go:build race

package kernel

// raceEnabled says the test binary runs under the race detector.
const raceEnabled = true
