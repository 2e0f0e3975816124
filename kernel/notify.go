package kernel

import (
	"encoding/json"

	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
)

// notified turns a plugin's notify notification into an observe.EventNotify,
// from the reading goroutine of client id. The generation is the current one
// only if id is the plugin's client in it; a process not (or no longer) in the
// current generation gets zero.
func (k *Kernel) notified(plugin string, id uint64, event string, data json.RawMessage) {
	var number uint64
	if g := k.Current(); g != nil && clientNamed(g, plugin) != nil && clientNamed(g, plugin).ID() == id {
		number = g.Number()
	} else {
		k.log.Debug("notify from a process outside the current generation", "plugin", plugin, "client", id,
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
	if r := redactor(cfg.PluginEnv); r != nil {
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
