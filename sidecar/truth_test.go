//go:build unix

package sidecar

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestNoShutdownLogWithoutShutdown: a plugin stopped before its handshake
// completed was never sent shutdown, so the host log must not say it did
// not exit after one.
func TestNoShutdownLogWithoutShutdown(t *testing.T) {
	opts, logs := testOptions(t)
	opts.HandshakeTimeout = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if c, err := Start(ctx, installFixture(t, "no-handshake"), opts); c != nil || err == nil {
		t.Fatalf("Start = %v, %v; want a handshake failure", c, err)
	}
	assertNoProcesses(t)
	if log := logs.String(); strings.Contains(log, "after shutdown") {
		t.Errorf("host log speaks of a shutdown that was never sent:\n%s", log)
	}
}
