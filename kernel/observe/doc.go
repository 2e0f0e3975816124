// Package observe holds what a host learns about a running kernel: the
// events it publishes (kernel.Kernel.Subscribe), the plugin statuses it
// reports (kernel.Kernel.Plugins), the hooks an Observer receives for every
// call and start (config.Config.Observer), and the W3C trace context the
// kernel carries into plugins (WithTraceparent, Traceparent).
//
// The package declares values and one interface; it runs nothing and
// holds no state. An adapter that exports these to a telemetry
// system, such as the OpenTelemetry one (module
// github.com/extkernel/extkernel/otel), depends on this package alone.
//
// # Redaction
//
// Every string in an Event or a PluginStatus that a plugin supplied
// (reasons, stderr lines, error messages) has passed the kernel's one
// redaction point before it reaches the host, except Event.Data, the JSON
// a plugin sent with a notify, which is the host's to use as received.
package observe
