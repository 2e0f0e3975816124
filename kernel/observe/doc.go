// Package observe holds what a host learns about a running kernel: the
// events it publishes (kernel.Kernel.Subscribe), the plugin statuses it
// reports (kernel.Kernel.Plugins), the hooks an Observer receives for every
// call and start (config.Config.Observer), and the W3C trace context the
// kernel carries into plugins (WithTraceparent, Traceparent).
//
// The package declares values, one interface and a Queue; it runs
// nothing. An adapter that exports these to a telemetry system, such as
// the OpenTelemetry one (module github.com/extkernel/extkernel/otel),
// depends on this package alone.
//
// # Queueing events
//
// The kernel delivers events synchronously and queues none: a plugin may
// send notifies as fast as it can write them, each with up to 4 MiB of
// data, and each reaches every Subscribe callback before the plugin's
// next message is read. A callback that hands events to a goroutine of
// its own MUST bound what it holds: a Queue is bounded in events and in
// bytes (Event.Size), drops the newest event when full, keeps half of
// itself for events other than notifies, and counts what it dropped for
// the consumer to report. kernelctl's printer, the admin server's event
// ring and streams (package admin) are bounded so.
//
// # Redaction
//
// Every string in an Event or a PluginStatus that a plugin supplied
// (reasons, stderr lines, error messages, a notify's event name) has
// passed the kernel's one redaction point before it reaches the host,
// except Event.Data, the JSON a plugin sent with a notify, which is the
// host's to use as received. A host that shows Data on a diagnostic
// channel redacts it first with the same function
// (config.Config.Redactor, package kernel/config), as the admin server
// does.
package observe
