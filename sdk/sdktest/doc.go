// Package sdktest is the extkernel plugin conformance suite: it starts the
// plugin of a package directory as the kernel would and checks, case by
// case, that it speaks the protocol of docs/protocol.md. It works for a
// plugin in any language; `kernelctl conformance DIR` runs it from the
// command line, and a Go plugin can run it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		sdktest.Check(t, ".", sdktest.Options{}) // the package directory, plugin built
//	}
//
// docs/conformance.md lists every case with the rule of protocol.md it
// checks. In short: manifest, handshake, declarations, ping, one
// call/<kind>/<id> case per declaration, host kinds included (or calls),
// callbacks, cancel, one stream/provider/<ref> case per provider (or
// streams), unknown-method, malformed, shutdown, group, stdout and stderr. A case
// fails when the plugin breaks a MUST of protocol.md, and only warns when
// it breaks a SHOULD; a report fails when any case failed.
//
// # Lifecycle
//
// Run, in order:
//
//  1. parses plugin.json with package pluginpkg and resolves its command
//     (case manifest); a package the kernel would not start stops here;
//  2. spawns the command as the kernel does (no shell, the package
//     directory as working directory, a process group of its own, the
//     kernel's environment and a data directory) and speaks the protocol
//     itself over the pipes: initialize, ping, a call to every
//     declaration with its input (Options.Inputs), $/cancel, a stream
//     asked of every provider and held to its credits, an unknown
//     method, then the host's stop
//     sequence (shutdown, end of stdin, SIGTERM, SIGKILL), and checks the
//     process group;
//  3. starts the plugin a second time and sends it malformed frames only,
//     so that a plugin which stops there does not spoil the other cases;
//  4. judges everything the plugin wrote on stdout and stderr in both.
//
// With Options.Confinement, every start is confined as the kernel confines
// the plugin (docs/security.md, "Confinement"), and what the plugin was
// denied, read from its error answers and stderr, is named in the report
// (Report.Denials; docs/conformance.md, "Confined").
//
// When Run returns, every process it started has exited and been reaped
// (a process that left the plugin's process group while holding its pipes
// is found and killed on Linux only), and every goroutine it started has
// returned.
//
// # Concurrency
//
// Run may be called from several goroutines at once; each call starts its
// own plugin processes. A Report is a plain value.
//
// # Errors
//
// Whatever the plugin does is a case, never an error: a plugin that cannot
// start fails the handshake case. Run returns an error only when the suite
// itself cannot run (see Run); the cases finished so far come with it.
//
// # Bounds
//
// Every wait is bounded and ends early when the context does: the
// handshake by the kernel's handshake timeout (10 s unless the manifest
// or Options say otherwise), ping by the heartbeat timeout (3 s), a call by
// Options.CallTimeout (2 s) and then 1 s after its $/cancel, shutdown and
// the exit by the shutdown grace (2 s), SIGTERM by the kill grace (2 s).
package sdktest
