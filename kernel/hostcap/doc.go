// Package hostcap holds capability handlers a host may register so that a
// plugin confined away from a file or the network (docs/security.md,
// "Confinement") still has a sanctioned way to them: it asks the host,
// over the bus (capability/call, docs/protocol.md §5.11), and the host
// answers within bounds it sets, auditing every call.
//
//   - host.fs.read (FSRead, NewFSRead): method read, {"path": "/abs/file"},
//     serves a regular file beneath one of the roots the host configures,
//     symbolic links resolved and refused when they leave the root, up to
//     a size bound.
//   - host.net.fetch (NetFetch, NewNetFetch): method get, {"url": "..."},
//     fetches an http or https URL that one of the host's allowlisted
//     prefixes covers, redirects included, within a size and a time
//     bound.
//
// A host declares the capability and registers the handler
// (config.Config.Capabilities and Handlers, package kernel/config);
// plugins that require it may call it. kernelctl registers both from
// kernel.json's capability_config (docs/config.md, "Host capabilities").
//
// # Answers
//
// Both answer {"size", "encoding", "content"} (host.net.fetch adds
// "status", "url" and "headers"): the content as text when it is valid
// UTF-8 ("encoding": "utf-8"), else in standard base64 ("base64"). A
// refusal or a failure is a *protocol.Error: -32602 for bad input, -32601
// for another method, -32000 for the rest, its Data
// {"reason": "denied" | "too_large" | "not_found" | "failed"} and its
// message naming the capability, the path or URL and why
// ("host.fs.read: denied: /etc/passwd is not beneath a root the host
// serves (/srv/docs)").
//
// # Audit
//
// Every call whose input names a path or a URL is recorded with
// observe.Audit: the kernel publishes it as an observe.EventAudit naming
// the calling plugin, the capability, the method, the path or URL
// (Target) and the outcome (State observe.AuditAllowed, AuditDenied or
// AuditFailed; Message says what was read, Err why not).
//
// # Concurrency
//
// A handler is a value built once: it holds no lock and may serve any
// number of calls at once. Its config is copied when it is built;
// changing the config afterwards changes nothing.
package hostcap
