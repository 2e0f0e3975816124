package kernel

import (
	"encoding/json"

	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

// notified turns a plugin's notify notification into an observe.EventNotify,
// from the reading goroutine of client c. The generation is the current one
// only if c is the plugin's client in it; a process not (or no longer) in the
// current generation gets zero.
func (k *Kernel) notified(c *sidecar.Client, event string, data json.RawMessage) {
	plugin := c.Name()
	var number uint64
	if l := k.current.Load(); l != nil && l.client(plugin) == c {
		number = l.gen.Number()
	} else {
		k.log.Debug("notify from a process outside the current generation", "plugin", plugin, "client", c.ID(),
			"event", k.redactText(event))
	}
	k.events.emit(observe.Event{Type: observe.EventNotify, Generation: number, Plugin: plugin, Name: event, Data: data})
}

// redactText is the kernel's redaction point for plugin text it logs
// itself: the function the clients redact with, or none without secrets.
func (k *Kernel) redactText(s string) string {
	if r := k.redact.Load(); r != nil {
		return (*r)(s)
	}
	return s
}

// setRedactor makes the secrets of cfg's plugin_env the ones redacted.
func (k *Kernel) setRedactor(cfg config.Config) {
	if r := cfg.Redactor(); r != nil {
		k.redact.Store(&r)
	} else {
		k.redact.Store(nil)
	}
}

// clientRedactor is the redaction a client is started with: redactText,
// which follows Reconfigure, when any secret is configured, else nil (a
// client that need not redact skips that work).
func (k *Kernel) clientRedactor() func(string) string {
	if k.redact.Load() == nil {
		return nil
	}
	return k.redactText
}
