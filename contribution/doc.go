// Package contribution turns what plugins (and the host itself) contribute
// into validated data: typed contributions, each kind's conflict policy, and
// the immutable, indexed Registry snapshot a generation dispatches from.
//
// The package never talks to processes. The generation layer converts a
// started plugin's manifest claims and handshake declarations into
// Contribution values (NewInterceptor, NewStrategy, NewProvider, NewAction),
// adds them to a Builder made from the host's HostSpec, and calls Build.
//
// # Contributions
//
// A Contribution has a Kind, a Key (what it attaches to), a Source (scope
// host or plugin, plugin name, version, origin manifest or handshake), a
// Priority, a declaration order Seq and a typed Payload. The built-in kinds:
//
//	kind         key                          payload      policy
//	interceptor  a host-declared Point        Interceptor  Ordered
//	strategy     a host-declared Slot         Strategy     Exclusive
//	provider     "plugin/<name>/<ref>"        Provider     Unique
//	action       "plugin/<name>/<id>"         Action       Unique
//
// A host accepts further kinds by listing them, each with its policy and
// target, in HostSpec.Kinds (append to DefaultKinds()); leaving a built-in
// kind out of a non-nil list refuses it. Plugins declare contributions of
// such host kinds in their handshake (protocol 1.1), which the generation
// layer adds with a Custom payload; the host may add its own with any
// payload. A host kind's key is the point or slot for a kind targeting
// one, and otherwise a free identifier. Unlike provider refs and action
// IDs, it is not namespaced by plugin: a tool "search.web" has the key
// "search.web" whoever declares it, so that the host can offer it by that
// name, and the kind's policy alone settles two plugins declaring one
// key.
//
// # Identifiers
//
// Points, slots, kinds, provider refs and action IDs follow the dotted
// grammar of docs/manifest.md: lower-case segments of [a-z0-9_-] separated by
// dots, each starting with a letter or digit, at most 128 bytes. A plugin's
// providers and UI actions are namespaced by plugin: ref "search.web" of
// plugin "memory" has the ID "plugin/memory/search.web" (ProviderID), its
// action "forget" the ID "plugin/memory/forget" (ActionID), so
// two plugins never collide over one; the host's own are "host/<ref>"
// (HostProviderID, HostActionID). A plugin name must not be empty and
// must not contain '/' or whitespace. Priority lies within
// MinPriority..MaxPriority (-1000..1000).
//
// # Policies
//
// Each kind's policy is declared once, in its KindSpec:
//
//   - Ordered (interceptors): any number of plugins per point. The effective
//     order, returned by Registry.Interceptors, is priority descending (a
//     HIGHER priority runs FIRST), then plugin name ascending (the host, with
//     no plugin name, before every plugin), then Seq ascending. It never
//     depends on map order or on the order contributions were added. A
//     plugin may declare an interceptor at a point once; the host, and host
//     Ordered kinds, may declare several (though a plugin's handshake
//     declares each kind and key once: docs/protocol.md §4.3).
//   - Exclusive (strategy slots): one owner per slot. Two plugins claiming
//     one slot fail the build with a CodeConflict error naming both, unless
//     HostSpec.SlotOwners names one of them (for kinds whose Target is
//     TargetSlot; an Exclusive host kind with TargetNone has no owner
//     override, so two claims always conflict): that plugin owns the slot and
//     every other claim is reported as a CodeOverridden warning and listed
//     by Registry.Overridden (it still counts as a claim; nothing is ever
//     last-writer-wins). A slot nobody claims has no owner
//     (Registry.SlotOwner reports false) and the host's default runs. A
//     slot owner that does not claim its slot is a CodeOwnerNotClaiming
//     problem; the slot is then resolved as if no owner were named.
//   - Unique (providers, UI actions): a key declared twice fails the build
//     with a CodeDuplicate error naming both declarations. Since the
//     built-in Unique keys are namespaced by plugin, only one plugin
//     declaring a ref or ID twice, or two plugins declaring one key of a
//     host kind, can do so.
//
// The host declares its points and slots in HostSpec. A contribution to an
// undeclared point or slot, or of a kind the host does not accept, is
// ignored and reported: an error when HostSpec.Strict is set, a warning
// otherwise.
//
// # Concurrency
//
// A Builder is not safe for concurrent use. A Registry is an immutable
// snapshot: Build copies its inputs, nothing changes a Registry afterwards,
// and any number of goroutines may read one without locking. Interceptors,
// SlotOwner, Provider, Actions, Get and OfKind take no lock and allocate
// nothing; the slices they return are shared with the registry, so callers
// MUST NOT modify their elements (their capacity equals their length, so an
// append copies). To change what is registered, build a new Registry.
//
// # Errors
//
// Build never stops at the first problem. Every problem is a Problem with a
// Severity, a Code, the Kind and Key it concerns, the Sources involved and a
// sentence a user can act on, for example:
//
//	slot "context.compactor" is claimed by both "memory" (handshake) and
//	"summarizer" (handshake); name its owner in the host config's slot_owners
//
// If any problem is an Error, Build returns a nil Registry and a
// *RegistryError whose Problems lists every problem, errors first (use
// errors.As). Otherwise the warnings are available from Registry.Warnings. A
// contribution that is invalid on its own (CodeInvalid) takes no further part
// in the build, so one mistake is not reported twice.
//
// Isolate decides what a failed Build's problems mean for optional plugins:
// which are left out (each with the rules it broke) and whether the
// build must fail instead. It is the one isolation rule a generation's
// build and its plan apply, each building again from the rest.
//
// # Invariants
//
//   - Build is deterministic: the same contributions produce the same
//     registry and the same problems whatever order they were added in (the
//     Add order breaks ties only between contributions equal in priority,
//     plugin, Seq and origin).
//   - A Registry never changes once returned.
//   - An Exclusive key has at most one owner; a Unique key at most one
//     contribution.
package contribution
