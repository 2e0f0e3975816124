"""extkernel plugin SDK for Python 3 (standard library only).

The plugin side of the extkernel protocol (docs/protocol.md), with the same
semantics as the Go SDK (package sdk):

    import extkernel

    p = extkernel.Plugin("redactor", "1.0.0")

    @p.intercept("tool.before")
    def before(point, payload, cancel):
        return extkernel.continue_()

    p.serve()

Lifecycle: register declarations, then serve(). The host speaks first; any
request before ``initialize`` is answered with NOT_INITIALIZED. ``initialize``
is answered with the plugin's identity, PROTOCOL_VERSION and every
declaration, after the optional on_initialize hook succeeds. Calls are
answered until ``shutdown`` or the end of stdin; in-flight handlers then get
one second to finish, after which their cancel events are set, their calls
are answered with REQUEST_CANCELLED, and they get half a second more. serve() then exits the process (0, or 1 on a protocol
failure).

Concurrency: every intercept, strategy, provider and action call runs in its
own thread and is answered as soon as it finishes, so handlers must be
thread-safe. ``ping`` is answered at once by the reader. Each handler gets a
``threading.Event`` (``cancel``) that is set when the host sends ``$/cancel``
for the call (the call is then answered with REQUEST_CANCELLED at once and
the handler's result dropped) or when the drain bound runs out. notify() and
the logger are thread-safe.

Errors: a handler that raises ProtocolError answers with its code and
message; any other exception answers PLUGIN_ERROR with the exception's text
(its traceback is logged). A call naming an undeclared point, slot, provider
or action gets UNKNOWN_TARGET. Only protocol frames go to stdout; serve()
points sys.stdout at stderr so stray print() calls cannot corrupt the stream.
Logs are hclog JSON lines on stderr, which the host parses keeping level and
fields.
"""

import datetime
import json
import sys
import threading
import traceback

PROTOCOL_VERSION = "1.0.0"
MAX_FRAME = 4 << 20

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
NOT_INITIALIZED = -32002
UNSUPPORTED_VERSION = -32003
UNKNOWN_TARGET = -32004
PLUGIN_ERROR = -32000

DRAIN_WAIT = 1.0
CANCEL_WAIT = 0.5

__all__ = [
    "Plugin", "ProtocolError", "Logger", "continue_", "modify", "deny",
    "PROTOCOL_VERSION", "MAX_FRAME",
]


class ProtocolError(Exception):
    """An error that crosses the wire with its code (see the error codes)."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self):
        err = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class FrameTooLarge(ProtocolError):
    """A frame from the host exceeds MAX_FRAME; the stream is unusable."""


def continue_():
    """The decision that passes the payload on unchanged (also: return None)."""
    return {"decision": "continue"}


def modify(payload):
    """The decision that replaces the payload for the rest of the chain."""
    return {"decision": "modify", "payload": payload}


def deny(reason):
    """The decision that stops the chain, with the reason shown to the user."""
    return {"decision": "deny", "reason": reason}


class Logger:
    """Writes hclog JSON lines to a stream (stderr). Thread-safe."""

    LEVELS = ("trace", "debug", "info", "warn", "error")

    def __init__(self, name, stream=None, level="info"):
        self.name = name
        self.stream = stream if stream is not None else sys.stderr
        self.level = level
        self._lock = threading.Lock()

    def log(self, level, message, **fields):
        if self.LEVELS.index(level) < self.LEVELS.index(self.level):
            return
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
        entry = {"@level": level, "@message": message, "@module": self.name, "@timestamp": now}
        for k, v in fields.items():
            entry[k] = v
        line = json.dumps(entry, default=str, ensure_ascii=False)
        with self._lock:
            try:
                self.stream.write(line + "\n")
                self.stream.flush()
            except (OSError, ValueError):
                pass

    def trace(self, message, **fields): self.log("trace", message, **fields)
    def debug(self, message, **fields): self.log("debug", message, **fields)
    def info(self, message, **fields): self.log("info", message, **fields)
    def warn(self, message, **fields): self.log("warn", message, **fields)
    def error(self, message, **fields): self.log("error", message, **fields)


def _major(version):
    s = version[1:] if isinstance(version, str) and version.startswith("v") else version
    if not isinstance(s, str):
        raise ValueError("%r is not a semantic version" % (version,))
    head = s.split(".", 1)[0]
    if not head.isdigit():
        raise ValueError("%r is not a semantic version" % (version,))
    return int(head)


class _Call:
    __slots__ = ("id", "method", "cancel", "answered", "lock")

    def __init__(self, id, method):
        self.id = id
        self.method = method
        self.cancel = threading.Event()
        self.answered = False
        self.lock = threading.Lock()

    def claim(self):
        """True exactly once: the caller may write the answer."""
        with self.lock:
            if self.answered:
                return False
            self.answered = True
            return True


class Plugin:
    """One plugin: its identity, declarations and handlers."""

    def __init__(self, name, version):
        self.name = name
        self.version = version
        self.log = Logger(name)
        self._provides = []
        self._interceptors = []  # declarations, in registration order
        self._strategies = []
        self._providers = []
        self._actions = []
        self._handlers = {"point": {}, "slot": {}, "provider": {}, "action": {}}
        self._on_init = None
        self._session = None

    # -- registration ---------------------------------------------------

    def provide(self, capability, version):
        """Declares that the plugin provides capability at version."""
        if any(c["capability"] == capability for c in self._provides):
            raise ValueError("provide: duplicate capability %r" % capability)
        self._provides.append({"capability": capability, "version": version})

    def intercept(self, point, handler=None, priority=None):
        """Registers handler(point, payload, cancel) -> decision at point.

        Usable as a decorator. priority=None uses the manifest's priority."""
        def register(fn):
            decl = {"point": point}
            if priority is not None:
                decl["priority"] = priority
            self._add("point", point, fn, self._interceptors, decl)
            return fn
        return register(handler) if handler is not None else register

    def strategy(self, slot, handler=None):
        """Registers handler(input, cancel) -> output for slot."""
        def register(fn):
            self._add("slot", slot, fn, self._strategies, {"slot": slot})
            return fn
        return register(handler) if handler is not None else register

    def provider(self, ref, description="", handler=None, schema=None):
        """Registers handler(input, cancel) -> output as provider ref."""
        def register(fn):
            decl = {"ref": ref}
            if description:
                decl["description"] = description
            if schema is not None:
                decl["schema"] = schema
            self._add("provider", ref, fn, self._providers, decl)
            return fn
        return register(handler) if handler is not None else register

    def action(self, id, title, placement="", handler=None):
        """Registers handler(context, cancel) -> output as UI action id."""
        def register(fn):
            decl = {"id": id, "title": title}
            if placement:
                decl["placement"] = placement
            self._add("action", id, fn, self._actions, decl)
            return fn
        return register(handler) if handler is not None else register

    def on_initialize(self, fn):
        """Sets fn(params) run while answering initialize; raising fails the
        handshake. Usable as a decorator."""
        self._on_init = fn
        return fn

    def _add(self, kind, name, fn, decls, decl):
        if self._session is not None:
            raise RuntimeError("register %s %r: the plugin is serving" % (kind, name))
        if not name or not callable(fn):
            raise ValueError("register %s: need a name and a callable" % kind)
        if name in self._handlers[kind]:
            raise ValueError("register %s: duplicate %r" % (kind, name))
        self._handlers[kind][name] = fn
        decls.append(decl)

    def _declarations(self):
        res = {"protocol_version": PROTOCOL_VERSION, "name": self.name, "version": self.version}
        for key, decls in (("provides", self._provides), ("interceptors", self._interceptors),
                           ("strategies", self._strategies), ("providers", self._providers),
                           ("actions", self._actions)):
            if decls:
                res[key] = list(decls)
        return res

    # -- serving --------------------------------------------------------

    def notify(self, event, data=None):
        """Sends a notify notification. Raises RuntimeError before the
        handshake completed or when not serving."""
        s = self._session
        if s is None:
            raise RuntimeError("notify %r: the plugin is not serving" % event)
        s.notify(event, data)

    def serve(self):
        """Serves on stdin/stdout and exits the process."""
        out = sys.stdout.buffer
        sys.stdout = sys.stderr
        try:
            self.serve_io(sys.stdin.buffer, out)
        except Exception as e:  # a protocol failure
            self.log.error("plugin stopped on a protocol failure", error=str(e))
            sys.stderr.flush()
            _exit(1)
        _exit(0)

    def serve_io(self, rfile, wfile):
        """Serves reading frames from binary rfile and writing to binary
        wfile. Returns after shutdown or end of input, once handlers have
        finished (bounded); raises on a fatal protocol failure."""
        if self._session is not None:
            raise RuntimeError("the plugin is already serving")
        s = _Session(self, wfile)
        self._session = s
        try:
            s.read_loop(rfile)
        finally:
            s.drain()
            self._session = None


def _exit(code):
    import os
    try:
        sys.stderr.flush()
    finally:
        os._exit(code)  # handler threads that ignore cancellation cannot hold us


class _Session:
    def __init__(self, plugin, wfile):
        self.p = plugin
        self.log = plugin.log
        self.wfile = wfile
        self.wlock = threading.Lock()
        # orders the initialize answer before any notify
        self.handshake = threading.Lock()
        self.initialized = False
        self.broken = None
        self.calls = {}
        self.active = 0
        self.cond = threading.Condition()

    # -- output ---------------------------------------------------------

    def write(self, msg):
        msg = {"jsonrpc": "2.0", **msg}
        data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
        if len(data) > MAX_FRAME + 1:
            raise ValueError("frame of %d bytes exceeds the %d byte limit" % (len(data), MAX_FRAME))
        with self.wlock:
            if self.broken is not None:
                return
            try:
                self.wfile.write(data)
                self.wfile.flush()
            except (OSError, ValueError) as e:
                self.broken = e

    def reply(self, id, result):
        try:
            self.write({"id": id, "result": result})
        except (TypeError, ValueError) as e:
            self.write({"id": id, "error": {"code": INTERNAL_ERROR, "message": "encode result: %s" % e}})

    def reply_error(self, id, err):
        self.write({"id": id, "error": err.to_wire()})

    def notify(self, event, data):
        params = {"event": event}
        if data is not None:
            params["data"] = data
        with self.handshake:
            if not self.initialized:
                raise RuntimeError("notify %r: handshake not complete" % event)
            self.write({"method": "notify", "params": params})

    # -- input ----------------------------------------------------------

    def read_loop(self, rfile):
        while self.broken is None:
            line = rfile.readline(MAX_FRAME + 2)
            if not line:
                return  # end of input
            if not line.endswith(b"\n") and len(line) > MAX_FRAME:
                raise FrameTooLarge(INVALID_REQUEST, "frame exceeds %d bytes" % MAX_FRAME)
            if not line.strip():
                continue
            try:
                msg = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as e:
                self.log.warn("malformed frame from host", error=str(e))
                self.write({"id": None, "error": {"code": PARSE_ERROR, "message": "not JSON: %s" % e}})
                continue
            if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
                self.write({"id": None, "error": {"code": INVALID_REQUEST, "message": "not a JSON-RPC 2.0 message"}})
                continue
            if self.dispatch(msg):
                return  # shutdown
        raise OSError("write to host: %s" % self.broken)

    def dispatch(self, msg):
        """Handles one message; returns True after shutdown."""
        method, id = msg.get("method"), msg.get("id")
        if not isinstance(method, str):
            return False  # a response: the plugin sends no requests
        if "id" not in msg:
            if method == "$/cancel":
                self.cancel((msg.get("params") or {}).get("id"))
            return False
        if method == "initialize":
            self.initialize(id, msg.get("params"))
        elif not self.initialized:
            self.reply_error(id, ProtocolError(NOT_INITIALIZED, "%s before initialize" % method))
        elif method == "ping":
            self.reply(id, {})
        elif method == "shutdown":
            self.log.debug("shutdown requested")
            self.reply(id, {})
            return True
        elif method in _ROUTES:
            self.spawn(id, method, msg.get("params"))
        else:
            self.reply_error(id, ProtocolError(METHOD_NOT_FOUND, "method %r not found" % method))
        return False

    def initialize(self, id, params):
        if self.initialized:
            self.reply_error(id, ProtocolError(INVALID_REQUEST, "initialize: already initialized"))
            return
        try:
            if not isinstance(params, dict):
                raise ProtocolError(INVALID_PARAMS, "missing params")
            _check_version(params.get("protocol_version"))
            if self.p._on_init is not None:
                self.p._on_init(params)
        except Exception as e:
            self.reply_error(id, _wire_error(e, self.log, "initialize"))
            return
        with self.handshake:
            self.reply(id, self.p._declarations())
            self.initialized = True

    def cancel(self, id):
        with self.cond:
            c = self.calls.get(json.dumps(id))
        if c is None:
            return
        c.cancel.set()
        if c.claim():
            self.reply_error(c.id, ProtocolError(REQUEST_CANCELLED, "%s cancelled by the host" % c.method))

    def spawn(self, id, method, params):
        key = json.dumps(id)
        with self.cond:
            if key in self.calls:
                dup = True
            else:
                dup = False
                call = _Call(id, method)
                self.calls[key] = call
                self.active += 1
        if dup:
            self.reply_error(id, ProtocolError(INVALID_REQUEST, "%s: request id %s is already in flight" % (method, key)))
            return
        t = threading.Thread(target=self.run, args=(key, call, params), daemon=True,
                             name="extkernel-%s-%s" % (method, key))
        t.start()

    def run(self, key, call, params):
        try:
            try:
                result = _ROUTES[call.method](self, params, call.cancel)
                error = None
            except BaseException as e:  # incl. SystemExit: the thread must answer
                result, error = None, _wire_error(e, self.log, call.method)
            if call.claim():
                if error is not None:
                    self.reply_error(call.id, error)
                else:
                    self.reply(call.id, result)
        finally:
            with self.cond:
                if self.calls.get(key) is call:
                    del self.calls[key]
                self.active -= 1
                self.cond.notify_all()

    def drain(self):
        with self.cond:
            if self.cond.wait_for(lambda: self.active == 0, DRAIN_WAIT):
                return
            stragglers = list(self.calls.values())
        for c in stragglers:
            c.cancel.set()
            if c.claim():
                self.reply_error(c.id, ProtocolError(REQUEST_CANCELLED, "%s cancelled: the plugin is shutting down" % c.method))
        with self.cond:
            if not self.cond.wait_for(lambda: self.active == 0, CANCEL_WAIT):
                self.log.warn("handlers did not return after cancellation", count=self.active)

    # -- calls ----------------------------------------------------------

    def lookup(self, kind, name):
        handlers = self.p._handlers[kind]
        if name not in handlers:
            declared = ", ".join(sorted(handlers)) or "none"
            label = "point" if kind == "point" else kind
            raise ProtocolError(UNKNOWN_TARGET, "unknown %s %s (declared: %s)" % (label, json.dumps(name), declared))
        return handlers[name]

    def intercept(self, params, cancel):
        params = _params(params, "point")
        point = params["point"]
        res = self.lookup("point", point)(point, params.get("payload"), cancel)
        return _check_decision(res)

    def strategy(self, params, cancel):
        params = _params(params, "slot")
        return _output(self.lookup("slot", params["slot"])(params.get("input"), cancel))

    def provider(self, params, cancel):
        params = _params(params, "ref")
        return _output(self.lookup("provider", params["ref"])(params.get("input"), cancel))

    def action(self, params, cancel):
        params = _params(params, "id")
        return _output(self.lookup("action", params["id"])(params.get("context"), cancel))


_ROUTES = {
    "intercept": _Session.intercept,
    "strategy/invoke": _Session.strategy,
    "provider/invoke": _Session.provider,
    "action/run": _Session.action,
}


def _params(params, key):
    if not isinstance(params, dict):
        raise ProtocolError(INVALID_PARAMS, "missing params" if params is None else "invalid params: not an object")
    if not isinstance(params.get(key), str):
        raise ProtocolError(INVALID_PARAMS, "invalid params: %s must be a string" % key)
    return params


def _output(value):
    if value is None:
        return {}
    try:
        json.dumps(value)
    except (TypeError, ValueError) as e:
        raise ProtocolError(INTERNAL_ERROR, "encode output: %s" % e)
    return {"output": value}


def _check_decision(res):
    if res is None:
        return continue_()
    if not isinstance(res, dict):
        raise ProtocolError(PLUGIN_ERROR, "interceptor returned %r, want a decision" % (res,))
    decision = res.get("decision", "continue")
    if decision == "continue":
        return continue_()
    if decision == "modify":
        if "payload" not in res:
            raise ProtocolError(PLUGIN_ERROR, "interceptor decided modify without a payload")
        return {"decision": "modify", "payload": res["payload"]}
    if decision == "deny":
        out = {"decision": "deny"}
        if res.get("reason"):
            out["reason"] = res["reason"]
        return out
    raise ProtocolError(PLUGIN_ERROR, "interceptor returned unknown decision %r (want continue, modify or deny)" % decision)


def _check_version(host):
    try:
        hm = _major(host)
    except ValueError as e:
        raise ProtocolError(INVALID_PARAMS, "initialize: protocol_version: %s" % e)
    pm = _major(PROTOCOL_VERSION)
    if hm > pm:
        raise ProtocolError(UNSUPPORTED_VERSION, "host speaks protocol %s, this plugin speaks %s: "
                            "upgrade the plugin (its extkernel SDK)" % (host, PROTOCOL_VERSION))
    if hm < pm:
        raise ProtocolError(UNSUPPORTED_VERSION, "host speaks protocol %s, this plugin speaks %s: "
                            "upgrade the host" % (host, PROTOCOL_VERSION))


def _wire_error(e, log, method):
    if isinstance(e, ProtocolError):
        return e
    log.error("handler failed", method=method, error=str(e), traceback=traceback.format_exc())
    return ProtocolError(PLUGIN_ERROR, "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__)
