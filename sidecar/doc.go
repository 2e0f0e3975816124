// Package sidecar starts and talks to plugin processes: spawn, stdio framing,
// JSON-RPC, the handshake, calls with deadlines and cancellation, stop
// budgets, crash detection and bounded pool startup under one budget. It knows
// packages and processes, never generations. It is built in a later layer;
// this file reserves the package.
package sidecar
