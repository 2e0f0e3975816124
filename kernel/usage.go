package kernel

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

// Usage counters (issue 28, item 3; docs/protocol.md §4.6): per plugin,
// how often it used each optional protocol feature the host served and
// how many handshakes it answered with each protocol minor, so that an
// operator sees who relies on a feature before it is deprecated or
// removed. The keys are a fixed set (wire.UsageKeys): a plugin cannot add
// one, so the counters of a kernel are bounded by the plugin names it has
// started times that set. The sidecars count each use where it happens
// (sidecar.Options.OnUse, the kernel's used) and the counters live for
// the kernel's lifetime, across reloads and restarts, as the call
// counters do.

// usageIndex maps a usage key to its counter's index.
var usageIndex = func() map[string]int {
	m := make(map[string]int, len(wire.UsageKeys))
	for i, k := range wire.UsageKeys {
		m[k] = i
	}
	return m
}()

// deprecation is a deprecated feature: announced in the CHANGELOG under
// the release that deprecated it, and served, with a warning to whoever
// still uses it, for at least 12 months and 2 minor releases
// (docs/compatibility.md).
type deprecation struct {
	// since is the release that deprecated it; instead says what
	// replaces it.
	since, instead string
}

// deprecations are the deprecated features, by usage key. None is
// deprecated today: a deprecation adds its key here (and, for a feature
// that is no feature of its own, to wire.UsageKeys), and the kernel then
// warns, once per plugin process, when a plugin uses it.
var deprecations = map[string]deprecation{}

// usageStats are one plugin's usage counters: atomics, one per key of
// wire.UsageKeys, and per key the ID of the client whose use of a
// deprecated feature was last warned about.
type usageStats struct {
	n      []atomic.Uint64
	warned []atomic.Uint64
}

// usageTable holds every plugin's usage counters, by name, for the
// kernel's lifetime: a sync.Map, as a plugin's counters are created once
// and then only read, on every use.
type usageTable struct {
	plugin sync.Map // string -> *usageStats
}

// of returns plugin's counters, creating them.
func (t *usageTable) of(plugin string) *usageStats {
	if u, ok := t.plugin.Load(plugin); ok {
		return u.(*usageStats)
	}
	u, _ := t.plugin.LoadOrStore(plugin, &usageStats{
		n: make([]atomic.Uint64, len(wire.UsageKeys)), warned: make([]atomic.Uint64, len(wire.UsageKeys))})
	return u.(*usageStats)
}

// snapshot returns plugin's non-zero counters by key, nil when it has
// none.
func (t *usageTable) snapshot(plugin string) map[string]uint64 {
	v, ok := t.plugin.Load(plugin)
	if !ok {
		return nil
	}
	u := v.(*usageStats)
	var out map[string]uint64
	for i := range u.n {
		if n := u.n[i].Load(); n > 0 {
			if out == nil {
				out = map[string]uint64{}
			}
			out[wire.UsageKeys[i]] = n
		}
	}
	return out
}

// used is every sidecar's OnUse: it counts one use of key by c's plugin,
// tells the observer (when it is an observe.UsageObserver) and warns
// about a deprecated feature. A key the kernel does not know (none is
// sent) is dropped.
func (k *Kernel) used(c *sidecar.Client, key string) {
	i, ok := usageIndex[key]
	if !ok {
		return
	}
	plugin := c.Name()
	u := k.usage.of(plugin)
	u.n[i].Add(1)
	if uo, ok := k.config().Observer.(observe.UsageObserver); ok {
		uo.Use(plugin, key)
	}
	if d, ok := deprecations[key]; ok && u.warned[i].Swap(c.ID()) != c.ID() {
		k.deprecatedUse(plugin, key, d)
	}
}

// deprecatedUse warns, in the log and as an EventWarning naming the
// plugin, that plugin uses the deprecated feature key.
func (k *Kernel) deprecatedUse(plugin, key string, d deprecation) {
	msg := fmt.Sprintf("plugin %q uses %q, deprecated since %s: %s", plugin, key, d.since, d.instead)
	k.log.Warn(msg)
	var number uint64
	if l := k.current.Load(); l != nil {
		number = l.gen.Number()
	}
	k.events.emit(observe.Event{Type: observe.EventWarning, Generation: number, Plugin: plugin, Message: msg})
}

// protocolStatus returns the protocol version plugin's process in the
// current generation answered and the features it uses (announced, or,
// before 1.4, those of 1.3), sorted; empty when none runs there.
func protocolStatus(l *live, plugin string) (string, []string) {
	if l == nil {
		return "", nil
	}
	c, err := l.running(plugin)
	if err != nil || c.Declarations() == nil {
		return "", nil
	}
	d := c.Declarations()
	if !wire.Announces(d.ProtocolVersion) {
		return d.ProtocolVersion, wire.Features13.Names()
	}
	return d.ProtocolVersion, wire.ParseFeatures(d.Features).Names()
}
