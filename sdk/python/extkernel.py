"""extkernel plugin SDK for Python 3 (standard library only).

The plugin side of the extkernel protocol (docs/protocol.md), with the same
semantics as the Go SDK (package sdk):

    import extkernel

    p = extkernel.Plugin()  # name and version: the manifest's, from the kernel

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

Calling capabilities (protocol 1.1): ``plugin.call(capability, method,
input=None, timeout=None)`` calls a method of a capability the manifest
requires, through the host, and returns the callee's output. It blocks the
calling thread only: the reader goes on serving host requests (a callee may
call back into this plugin) and routes the answer to the waiting thread.
Made from a handler's thread, the call names the handler's request as its
``parent`` (the host derives the call's deadline, cancellation and depth from
it), and the handler's cancel event cancels it: the SDK sends ``$/cancel``
for the call and raises ProtocolError(REQUEST_CANCELLED), and a call made
once the request was cancelled is not sent and raises the same. From any other
thread the call is independent. An error answer raises ProtocolError with
its code (NOT_AUTHORIZED, NOT_AVAILABLE, DEPTH_EXCEEDED, STALE_GENERATION,
...); ``timeout`` (seconds) passing first sends ``$/cancel`` and raises
TimeoutError; CallRefused is raised, with nothing sent, when the plugin is
not serving, before the handshake, or when the host does not support the
calls feature (a host of protocol 1.0), and when serving ends before the
answer comes. The plugin's request ids are
"c1", "c2", ...; an answer to no call in flight is ignored.

Contributions of host-declared kinds (protocol 1.1):
``plugin.contribute(kind, key, handler=None, data=None, title=None,
priority=None)`` declares a contribution of a kind the host declares (such
as "tool") at key, which the manifest's runtime.contributes must list, and
registers handler(input, cancel) -> output for the host's
``contribution/invoke``. Usable as a decorator; called without a handler
(and not as a decorator) the contribution is one the host only reads. It is
declared only to a host that supports the contributions feature (1.1 or
later).

Features (protocol 1.4, docs/protocol.md section 4.6): the plugin answers
initialize with PROTOCOL_VERSION 1.4.0 and announces FEATURES, every
optional feature the SDK implements. ``plugin.host_supports(feature)``
says whether the host serves one (FEATURE_CALLS, FEATURE_CANCEL,
FEATURE_CONTRIBUTIONS, FEATURE_PROGRESS, FEATURE_STREAMS, FEATURE_TRACE):
what a host of 1.4 or later announced, or what an older host's version
implies. The SDK uses only those: without calls, call() and
call_stream() raise CallRefused (without streams, call_stream() does);
without progress, progress() sends nothing; without cancel, a call given
up is not cancelled (its late answer is dropped); without trace, calls
carry no traceparent. A plugin tests host_supports, not the version.

Streams (protocol 1.1, docs/protocol.md section 5.12): ``@p.stream_provider(ref)``
registers a generator function ``handler(input, cancel)`` whose items are
the chunks of its answer. When the host asks for a stream, each item is sent
as a ``$/stream/chunk`` once the host's window allows (the generator is not
resumed while the window is full, so a slow consumer holds it back); when the
host cancels, the generator is closed (GeneratorExit at its ``yield``). When
the host asks for no stream (a 1.0 host), the items are answered as one
output, their list. ``p.call_stream(capability, method, input=None,
timeout=None, window=16)`` returns a CallStream, an iterator over the chunks
of a capability's stream (the provider's output, for one that does not
stream, is the one chunk); it acknowledges chunks as they are taken, and
closing it early (``close()``, ``with``, or dropping it) cancels the call.
Its errors are call()'s.

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

import collections
import datetime
import json
import os
import re
import sys
import threading
import traceback

PROTOCOL_VERSION = "1.4.0"
MAX_FRAME = 4 << 20

# Features (protocol 1.4, docs/protocol.md section 4.6): the optional
# protocol features a host may serve. The plugin announces every one the
# SDK implements (FEATURES) and uses of each only what the host supports
# (Plugin.host_supports): what a host of 1.4 or later announced, or what
# an older host's version implies.
FEATURE_CALLS = "calls"
FEATURE_CANCEL = "cancel"
FEATURE_CONTRIBUTIONS = "contributions"
FEATURE_PROGRESS = "progress"
FEATURE_STREAMS = "streams"
FEATURE_TRACE = "trace"
FEATURES = (FEATURE_CALLS, FEATURE_CANCEL, FEATURE_CONTRIBUTIONS, FEATURE_PROGRESS, FEATURE_STREAMS, FEATURE_TRACE)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
NOT_INITIALIZED = -32002
UNSUPPORTED_VERSION = -32003
UNKNOWN_TARGET = -32004
NOT_AUTHORIZED = -32005
NOT_AVAILABLE = -32006
DEPTH_EXCEEDED = -32007
STALE_GENERATION = -32008
PLUGIN_ERROR = -32000

DRAIN_WAIT = 1.0
CANCEL_WAIT = 0.5

# Streams (protocol 1.1): the window asked for unless told otherwise, and
# the largest one a request may ask for.
DEFAULT_STREAM_WINDOW = 16
MAX_STREAM_WINDOW = 1024

__all__ = [
    "Plugin", "ProtocolError", "CallRefused", "CallStream", "Logger", "continue_", "modify", "deny",
    "PROTOCOL_VERSION", "MAX_FRAME", "DEFAULT_STREAM_WINDOW", "MAX_STREAM_WINDOW",
    "FEATURES", "FEATURE_CALLS", "FEATURE_CANCEL", "FEATURE_CONTRIBUTIONS", "FEATURE_PROGRESS",
    "FEATURE_STREAMS", "FEATURE_TRACE",
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


class CallRefused(RuntimeError):
    """call() could not be made or completed: the plugin is not serving, the
    handshake is not complete, the host speaks protocol 1.0 (calls need 1.1),
    or serving ended before the host answered. Nothing is sent in the first
    three cases."""


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
    """A host request in flight; outgoing holds the calls its handler makes
    (guarded by the session's cond)."""
    __slots__ = ("id", "method", "cancel", "answered", "lock", "outgoing")

    def __init__(self, id, method):
        self.id = id
        self.method = method
        self.cancel = threading.Event()
        self.answered = False
        self.lock = threading.Lock()
        self.outgoing = set()

    def claim(self):
        """True exactly once: the caller may write the answer."""
        with self.lock:
            if self.answered:
                return False
            self.answered = True
            return True


class Plugin:
    """One plugin: its identity, declarations and handlers."""

    def __init__(self, name=None, version=None):
        """name and version answer initialize; None (or empty) takes them
        from the environment the kernel sets, EXTKERNEL_PLUGIN_NAME and
        EXTKERNEL_PLUGIN_VERSION (the manifest's, docs/protocol.md §10).
        A value given wins; it should match the manifest's."""
        self.name = name or os.environ.get("EXTKERNEL_PLUGIN_NAME", "")
        self.version = version or os.environ.get("EXTKERNEL_PLUGIN_VERSION", "")
        self.log = Logger(self.name)
        self._provides = []
        self._interceptors = []  # declarations, in registration order
        self._strategies = []
        self._providers = []
        self._actions = []
        self._handlers = {"point": {}, "slot": {}, "provider": {}, "action": {}}
        self._contributions = []  # protocol 1.1 declarations
        self._contributed = {}  # (kind, key) -> handler, None for read only
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

    def stream_provider(self, ref, description="", handler=None):
        """Registers handler(input, cancel) -> iterable (usually a generator)
        as the streaming provider ref: each item is one chunk of its answer.
        Usable as a decorator."""
        def register(fn):
            decl = {"ref": ref}
            if description:
                decl["description"] = description
            if not callable(fn):
                raise ValueError("register provider: need a name and a callable")
            self._add("provider", ref, _StreamHandler(fn), self._providers, decl)
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

    def contribute(self, kind, key, handler=None, data=None, title=None, priority=None):
        """Declares a contribution of the host-declared kind at key (protocol
        1.1) and registers handler(input, cancel) -> output for it. Usable as
        a decorator; without a handler it is read only."""
        if self._session is not None:
            raise RuntimeError("contribute %s %r: the plugin is serving" % (kind, key))
        if not kind or not key:
            raise ValueError("contribute: need a kind and a key")
        if (kind, key) in self._contributed:
            raise ValueError("contribute: duplicate %s %r" % (kind, key))
        decl = {"kind": kind, "key": key}
        if priority is not None:
            decl["priority"] = priority
        if title:
            decl["title"] = title
        if data is not None:
            json.dumps(data)  # raises on data that cannot be sent
            decl["data"] = data
        self._contributions.append(decl)
        self._contributed[(kind, key)] = handler

        def register(fn):
            self._contributed[(kind, key)] = fn
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

    def _declarations(self, host_features=FEATURES):
        res = {"protocol_version": PROTOCOL_VERSION, "name": self.name, "version": self.version}
        contributions = self._contributions if FEATURE_CONTRIBUTIONS in host_features else []
        for key, decls in (("provides", self._provides), ("interceptors", self._interceptors),
                           ("strategies", self._strategies), ("providers", self._providers),
                           ("actions", self._actions), ("contributions", contributions)):
            if decls:
                res[key] = list(decls)
        res["features"] = list(FEATURES)
        return res

    def host_supports(self, feature):
        """Whether the host the plugin serves supports the optional
        protocol feature named feature (FEATURE_CALLS, ...): one a host of
        protocol 1.4 or later announced in initialize, or one an older
        host's version implies (none for 1.0; all but progress for 1.1 and
        1.2; all six for 1.3). False when not serving or before
        initialize. A plugin tests this, not the host's version."""
        s = self._session
        return s is not None and feature in s.host_features

    # -- serving --------------------------------------------------------

    def notify(self, event, data=None):
        """Sends a notify notification. Raises RuntimeError before the
        handshake completed or when not serving."""
        s = self._session
        if s is None:
            raise RuntimeError("notify %r: the plugin is not serving" % event)
        s.notify(event, data)

    def call(self, capability, method, input=None, timeout=None):
        """Calls method of capability (which the manifest must require)
        through the host and returns the callee's output (None when it
        returned none). Blocks the calling thread until the answer comes,
        timeout seconds pass (None: no own bound; the host bounds every
        call), or, from a handler's thread, the handler's request is
        cancelled; the SDK keeps serving host requests meanwhile.

        From a handler's thread the call names the handler's request as its
        parent. Raises ProtocolError with the host's code and message on an
        error answer, ProtocolError(REQUEST_CANCELLED) when the handler's
        request is cancelled first and TimeoutError when timeout passes
        first (both after sending $/cancel for the call), and CallRefused
        (see there). Thread-safe."""
        s = self._session
        if s is None:
            raise CallRefused("call %r: the plugin is not serving" % ("%s.%s" % (capability, method)))
        return s.call(capability, method, input, timeout)

    def call_stream(self, capability, method, input=None, timeout=None, window=DEFAULT_STREAM_WINDOW):
        """Calls method of capability through the host asking for a stream,
        and returns a CallStream: an iterator over its chunks. The call is
        made at once (raising what call() raises before sending); the
        iterator raises call()'s errors, and timeout bounds the whole
        stream. Closing it before the end cancels the call. Thread-safe;
        one thread iterates a CallStream."""
        s = self._session
        if s is None:
            raise CallRefused("call %r: the plugin is not serving" % ("%s.%s" % (capability, method)))
        return CallStream(s, capability, method, input, timeout, window)

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
            s.end_calls()
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
        # protocol 1.1 calls: the host's version, the features it serves
        # (protocol 1.4), and the plugin's own requests in flight by id
        # (under cond); ended once nothing more is read.
        self.host_version = None
        self.host_features = frozenset()
        self.outgoing = {}
        self.next_call = 0
        self.ended = False
        # streams in flight (under cond): those produced for host requests
        # by the request's JSON id, those consumed by the plugin's calls by id
        self.producing = {}
        self.consuming = {}

    # -- output ---------------------------------------------------------

    def write(self, msg, unless=None):
        """Writes msg, unless the host request unless (a _Call) was answered
        first: then nothing is written and write returns False. An answer is
        claimed (_Call.claim) before it is written, so a frame written with
        unless reaches the host before unless's answer, or not at all."""
        msg = {"jsonrpc": "2.0", **msg}
        data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
        if len(data) > MAX_FRAME + 1:
            raise ValueError("frame of %d bytes exceeds the %d byte limit" % (len(data), MAX_FRAME))
        with self.wlock:
            if unless is not None and unless.answered:
                return False
            if self.broken is not None:
                return True
            try:
                self.wfile.write(data)
                self.wfile.flush()
            except (OSError, ValueError) as e:
                self.broken = e
        return True

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
            self.answered(id, msg)  # a response to one of the plugin's calls
            return False
        if "id" not in msg:
            params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
            if method == "$/cancel":
                self.cancel(params.get("id"))
            elif method == "$/stream/ack":
                self.stream_ack(params)
            elif method == "$/stream/chunk":
                self.stream_chunk(params)
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
        self.host_version = params.get("protocol_version")
        self.host_features = _host_features(params)
        with self.handshake:
            self.reply(id, self.p._declarations(self.host_features))
            self.initialized = True

    def cancel(self, id):
        with self.cond:
            c = self.calls.get(json.dumps(id))
        if c is None:
            return
        self.cancel_call(c)
        if c.claim():
            self.reply_error(c.id, ProtocolError(REQUEST_CANCELLED, "%s cancelled by the host" % c.method))

    def cancel_call(self, c):
        """Sets c's cancel event and wakes the calls its handler waits for."""
        c.cancel.set()
        with self.cond:
            for out in list(c.outgoing):
                out.finish(reason="cancelled")
            self.cond.notify_all()  # a producer waiting for credit, a CallStream

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
        _current.serving = (self, call)
        tp = params.get("traceparent") if isinstance(params, dict) else None
        _current.traceparent = tp if isinstance(tp, str) and _TRACEPARENT.match(tp) else None
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
            _current.serving = None
            _current.traceparent = None
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
            self.cancel_call(c)
            if c.claim():
                self.reply_error(c.id, ProtocolError(REQUEST_CANCELLED, "%s cancelled: the plugin is shutting down" % c.method))
        with self.cond:
            if not self.cond.wait_for(lambda: self.active == 0, CANCEL_WAIT):
                self.log.warn("handlers did not return after cancellation", count=self.active)

    # -- the plugin's calls (protocol 1.1) -------------------------------

    def call(self, capability, method, input, timeout):
        name = "%s.%s" % (capability, method)
        out, parent = self.open_call(name, capability, method, input)
        answered = out.done.wait(timeout)
        with self.cond:
            if not answered and out.reason is None:
                out.finish(reason="timeout")
            self.forget_locked(out)
        if out.reason in ("cancelled", "timeout"):
            self.cancel_out(out)
            if out.reason == "timeout":
                raise TimeoutError("call %r: no answer within %s s" % (name, timeout))
            raise ProtocolError(REQUEST_CANCELLED, "call %r cancelled: %s was cancelled" % (name, parent.method))
        if out.reason == "ended":
            raise CallRefused("call %r: serving ended before the host answered" % name)
        return _call_output(name, out.response)

    def cancel_out(self, out):
        """Sends $/cancel for the plugin's call out, to a host that
        supports the cancel feature (another one's answer is dropped)."""
        if FEATURE_CANCEL in self.host_features:
            self.write({"method": "$/cancel", "params": {"id": out.id}})

    def open_call(self, name, capability, method, input, stream=None, consumer=None):
        """Sends the capability/call (asking for stream when given, whose
        chunks go to consumer) and returns the call in flight and its
        parent, or raises what call() raises before sending."""
        with self.handshake:  # waits for an initialize answer being written
            initialized = self.initialized
        if not initialized:
            raise CallRefused("call %r: handshake not complete" % name)
        if FEATURE_CALLS not in self.host_features:
            raise CallRefused("call %r: host speaks protocol %s without the \"calls\" feature" % (name, self.host_version))
        if stream is not None and FEATURE_STREAMS not in self.host_features:
            raise CallRefused("call %r: host speaks protocol %s without the \"streams\" feature" % (name, self.host_version))
        serving = getattr(_current, "serving", None)
        parent = serving[1] if serving is not None and serving[0] is self else None
        params = {"capability": capability, "method": method}
        if input is not None:
            params["input"] = input
        if parent is not None:
            params["parent"] = parent.id
        tp = traceparent()
        if tp is not None and FEATURE_TRACE in self.host_features:
            params["traceparent"] = tp
        if stream is not None:
            params["stream"] = stream
        out = self.start_call(name, parent)
        if consumer is not None:
            with self.cond:
                self.consuming[out.id] = consumer
        try:
            if _before_call_write is not None:
                _before_call_write(parent)
            # A call naming a parent already answered (cancelled while this
            # thread was past start_call's check) is not written: the host
            # would read it as malformed (docs/protocol.md §5.11).
            written = self.write({"id": out.id, "method": "capability/call", "params": params}, unless=parent)
        except BaseException:
            self.end_stream(out)
            raise
        if not written:
            self.end_stream(out)
            raise ProtocolError(REQUEST_CANCELLED, "call %r cancelled: %s was cancelled" % (name, parent.method))
        if self.broken is not None:
            self.end_stream(out)
            raise CallRefused("call %r: write to host: %s" % (name, self.broken))
        return out, parent

    def end_stream(self, out):
        """Forgets the call out and the stream it consumes, if any."""
        with self.cond:
            self.forget_locked(out)
            self.consuming.pop(out.id, None)

    def start_call(self, name, parent):
        """Registers a new call of the plugin (id "c1", "c2", ...), refusing
        when serving ended or the parent was cancelled."""
        with self.cond:
            if self.ended:
                raise CallRefused("call %r: the plugin stopped serving" % name)
            if parent is not None and parent.cancel.is_set():
                raise ProtocolError(REQUEST_CANCELLED, "call %r cancelled: %s was cancelled" % (name, parent.method))
            self.next_call += 1
            out = _Outgoing("c%d" % self.next_call, parent)
            self.outgoing[out.id] = out
            if parent is not None:
                parent.outgoing.add(out)
            return out

    def forget(self, out):
        with self.cond:
            self.forget_locked(out)

    def forget_locked(self, out):
        self.outgoing.pop(out.id, None)
        if out.parent is not None:
            out.parent.outgoing.discard(out)

    def answered(self, id, msg):
        """Routes the host's response msg to the call it answers; a response
        to no call in flight (a late answer to a call given up) is ignored."""
        with self.cond:
            out = self.outgoing.get(id) if isinstance(id, str) else None
            if out is not None:
                self.forget_locked(out)
                out.finish(response=msg)
                self.cond.notify_all()  # a CallStream waits on cond
        if out is None:
            self.log.debug("ignoring response to an unknown request", id=id)

    def end_calls(self):
        """Nothing more is read: every call in flight ends."""
        with self.cond:
            self.ended = True
            for out in list(self.outgoing.values()):
                out.finish(reason="ended")
            self.cond.notify_all()

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
        h = self.lookup("provider", params["ref"])
        if isinstance(h, _StreamHandler):
            return self.serve_stream(params, h.fn, cancel)
        return _output(h(params.get("input"), cancel))

    # -- streams (protocol 1.1) -----------------------------------------

    def serve_stream(self, params, fn, cancel):
        """Runs the streaming provider fn for the request this thread
        serves: its items sent as chunks when the host asks for a stream,
        else answered as one output, their list."""
        stream = params.get("stream")
        items = fn(params.get("input"), cancel)
        if stream is None:
            return _output(list(items))
        window = stream.get("window") if isinstance(stream, dict) else None
        if not isinstance(window, int) or isinstance(window, bool) or not 1 <= window <= MAX_STREAM_WINDOW:
            _close(items)
            raise ProtocolError(INVALID_PARAMS, "provider/invoke: stream window %r is not between 1 and %d"
                                % (window, MAX_STREAM_WINDOW))
        window_bytes = stream.get("window_bytes", 0)
        if not isinstance(window_bytes, int) or isinstance(window_bytes, bool) or window_bytes < 0:
            _close(items)
            raise ProtocolError(INVALID_PARAMS, "provider/invoke: stream window_bytes %r is not a size in bytes"
                                % (window_bytes,))
        call = _current.serving[1]
        key = json.dumps(call.id)
        producer = _Producer(window, window_bytes)
        with self.cond:
            self.producing[key] = producer
        try:
            for item in items:
                # The chunk's size as the host counts it: its data's JSON
                # text, as write serializes it.
                size = len(json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
                with self.cond:
                    while not producer.room(size) and not cancel.is_set() and not self.ended:
                        self.cond.wait()
                    if cancel.is_set() or self.ended:
                        break
                    seq = producer.send(size)
                self.write({"method": "$/stream/chunk", "params": {"id": call.id, "seq": seq, "data": item}})
        finally:
            _close(items)  # GeneratorExit in a generator still running
            with self.cond:
                self.producing.pop(key, None)
        if cancel.is_set() or self.ended:
            raise ProtocolError(REQUEST_CANCELLED, "provider/invoke cancelled: the stream's consumer went away")
        return {}

    def stream_ack(self, params):
        """The host's $/stream/ack for a stream the plugin produces."""
        seq = params.get("seq")
        with self.cond:
            producer = self.producing.get(json.dumps(params.get("id")))
            if producer is None or not isinstance(seq, int):
                return
            producer.ack(seq)
            self.cond.notify_all()

    def stream_chunk(self, params):
        """The host's $/stream/chunk for a stream one of the plugin's calls
        consumes; one for no such stream (it ended) is ignored."""
        with self.cond:
            consumer = self.consuming.get(params.get("id"))
            if consumer is None or consumer.fault is not None:
                return
            seq = params.get("seq")
            if seq != consumer.received + 1:
                consumer.fault = "chunk %r after chunk %d" % (seq, consumer.received)
            elif seq > consumer.acked + consumer.window or len(consumer.chunks) >= consumer.window:
                consumer.fault = "chunk %d is beyond the window: %d acknowledged, window %d" % (
                    seq, consumer.acked, consumer.window)
            else:
                consumer.received = seq
                consumer.chunks.append(params.get("data"))
            self.cond.notify_all()

    def action(self, params, cancel):
        params = _params(params, "id")
        return _output(self.lookup("action", params["id"])(params.get("context"), cancel))

    def contribution(self, params, cancel):
        kind, key = _params(params, "kind")["kind"], _params(params, "key")["key"]
        contributed = self.p._contributed
        if (kind, key) not in contributed:
            declared = ", ".join(sorted("%s %s" % k for k in contributed)) or "none"
            raise ProtocolError(UNKNOWN_TARGET, "unknown contribution %s (declared: %s)"
                                % (json.dumps(kind + " " + key), declared))
        if contributed[(kind, key)] is None:
            raise ProtocolError(UNKNOWN_TARGET, "%s %s has no handler: the host only reads it" % (kind, json.dumps(key)))
        return _output(contributed[(kind, key)](params.get("input"), cancel))


class _Outgoing:
    """One of the plugin's calls in flight. finish() is called under the
    session's cond, at most once taking effect: by the reader with the
    host's response, or with the reason the call ends without one."""
    __slots__ = ("id", "parent", "done", "response", "reason")

    def __init__(self, id, parent):
        self.id = id
        self.parent = parent
        self.done = threading.Event()
        self.response = None
        self.reason = None

    def finish(self, response=None, reason=None):
        if self.done.is_set():
            return
        self.response, self.reason = response, reason
        self.done.set()


class _StreamHandler:
    """A streaming provider's handler, as registered by stream_provider."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, input, cancel):  # never called: serve_stream runs fn
        raise TypeError("a streaming provider is run by serve_stream")


class _Producer:
    """A stream the plugin produces: its window of chunks and of bytes
    (window_bytes, protocol 1.2; 0 for none), the chunks sent, the last one
    the host acknowledged and the sizes of those in between (under the
    session's cond)."""
    __slots__ = ("window", "window_bytes", "sent", "acked", "unacked", "bytes")

    def __init__(self, window, window_bytes=0):
        self.window = window
        self.window_bytes = window_bytes
        self.sent = 0
        self.acked = 0
        self.unacked = collections.deque()
        self.bytes = 0

    def room(self, size):
        """Whether a chunk of size bytes may be sent: within the window of
        chunks and of bytes (a chunk larger than the byte window goes alone)."""
        return self.sent < self.acked + self.window and (
            not self.window_bytes or self.sent == self.acked or self.bytes + size <= self.window_bytes)

    def send(self, size):
        self.sent += 1
        self.unacked.append(size)
        self.bytes += size
        return self.sent

    def ack(self, seq):
        seq = min(seq, self.sent)
        while self.acked < seq:
            self.bytes -= self.unacked.popleft()
            self.acked += 1


class _Consumer:
    """A stream one of the plugin's calls consumes: the chunks received and
    not taken (under the session's cond), and the last seq acknowledged:
    a chunk past acked + window breaks the flow control (fault), found
    when it arrives, however fast the chunks are taken."""
    __slots__ = ("window", "chunks", "received", "acked", "fault")

    def __init__(self, window):
        self.window = window
        self.chunks = collections.deque()
        self.received = 0
        self.acked = 0
        self.fault = None


class CallStream:
    """An iterator over the chunks of a capability's stream (call_stream).
    It acknowledges the chunks as they are taken, each time half the window
    was; close() (or leaving a ``with`` block, or dropping it) cancels the
    call unless it ended. Iterated by one thread."""

    def __init__(self, session, capability, method, input, timeout, window):
        if not isinstance(window, int) or not 1 <= window <= MAX_STREAM_WINDOW:
            raise ValueError("call_stream: window %r is not between 1 and %d" % (window, MAX_STREAM_WINDOW))
        self._s = session
        self._name = "%s.%s" % (capability, method)
        self._window = window
        self._every = (window + 1) // 2
        self._taken = self._acked = 0
        self._done = True  # until the call is made
        self._deadline = None if timeout is None else _monotonic() + timeout
        self._timeout = timeout
        self._consumer = _Consumer(window)
        self._out, self._parent = session.open_call(self._name, capability, method, input,
                                                    {"window": window}, self._consumer)
        self._done = False

    def __iter__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __next__(self):
        if self._done:
            raise StopIteration
        s, out, consumer = self._s, self._out, self._consumer
        ack = 0
        with s.cond:
            while True:
                if consumer.fault is not None:  # first: no chunk after the one that broke it
                    got = False
                    break
                if consumer.chunks:
                    chunk, got = consumer.chunks.popleft(), True
                    self._taken += 1
                    if self._taken - self._acked >= self._every:
                        # counted before the ack is sent: a chunk it allows
                        # may come as soon as the host reads it
                        self._acked = consumer.acked = ack = self._taken
                    break
                if consumer.fault is not None or out.done.is_set():
                    got = False
                    break
                remaining = None if self._deadline is None else self._deadline - _monotonic()
                if remaining is not None and remaining <= 0:
                    out.finish(reason="timeout")
                    got = False
                    break
                s.cond.wait(remaining)
        if not got:
            return self._end()
        if ack:
            s.write({"method": "$/stream/ack", "params": {"id": out.id, "seq": ack}})
        return chunk

    def _end(self):
        """The stream ends: the answer's output, the error, or the end."""
        s, out, consumer = self._s, self._out, self._consumer
        if consumer.fault is not None and not out.done.is_set():
            self.close()
            raise ProtocolError(INTERNAL_ERROR, "call %r: stream: %s" % (self._name, consumer.fault))
        self._done = True
        s.end_stream(out)
        if out.reason in ("cancelled", "timeout"):
            s.cancel_out(out)
            if out.reason == "timeout":
                raise TimeoutError("call %r: the stream did not end within %s s" % (self._name, self._timeout))
            raise ProtocolError(REQUEST_CANCELLED, "call %r cancelled: %s was cancelled" % (self._name, self._parent.method))
        if out.reason == "ended":
            raise CallRefused("call %r: serving ended before the host answered" % self._name)
        output = _call_output(self._name, out.response)
        if output is not None:
            return output
        raise StopIteration

    def close(self):
        """Cancels the call unless it ended; idempotent."""
        if self._done:
            return
        self._done = True
        s, out = self._s, self._out
        with s.cond:
            answered = out.done.is_set() and out.response is not None
            out.finish(reason="closed")
        s.end_stream(out)
        if not answered:
            s.cancel_out(out)


def _close(items):
    close = getattr(items, "close", None)
    if close is not None:
        close()


def _monotonic():
    import time
    return time.monotonic()


# _current.serving is (session, call) in a handler's thread, None or unset
# elsewhere: the parent of the calls the thread makes. _current.traceparent
# is the W3C traceparent its request carried, or None.
_current = threading.local()

# _before_call_write, when set (by tests only), is called with the parent
# _Call (or None) just before a capability/call frame is written.
_before_call_write = None

_TRACEPARENT = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$")


def traceparent():
    """The W3C Trace Context traceparent of the host request the calling
    handler thread serves (docs/protocol.md §5.13), or None. A plugin that
    traces takes it as the parent of its own spans; plugin.call sends it on
    with the handler's calls."""
    return getattr(_current, "traceparent", None)


def progress(message=None, fraction=None):
    """Reports progress on the host request the calling handler thread
    serves, with a $/progress notification (protocol 1.3, docs/protocol.md
    §5.15): message says what the handler is doing, fraction (0 to 1) how
    much is done; either may be None. A host of protocol 1.3 or later
    extends the request's timeout with each progress, up to its maximum
    call duration, so a handler that runs longer than the host's timeout
    reports progress more often than that timeout; to a host without the
    progress feature (one before 1.3, which would ignore it) nothing is
    sent. Raises RuntimeError outside a handler thread or before the
    handshake, ValueError for a fraction out of [0, 1]."""
    serving = getattr(_current, "serving", None)
    if serving is None:
        raise RuntimeError("progress: not called from a handler thread")
    if fraction is not None and not (isinstance(fraction, (int, float)) and 0 <= fraction <= 1):
        raise ValueError("progress: fraction %r is not in [0, 1]" % (fraction,))
    session, call = serving
    params = {"id": call.id}
    if message is not None:
        params["message"] = str(message)
    if fraction is not None:
        params["fraction"] = float(fraction)
    with session.handshake:
        if not session.initialized:
            raise RuntimeError("progress: handshake not complete")
        if FEATURE_PROGRESS in session.host_features:
            session.write({"method": "$/progress", "params": params})


def _call_output(name, msg):
    err = msg.get("error")
    if err is not None:
        if not isinstance(err, dict) or not isinstance(err.get("code"), int):
            raise ProtocolError(INTERNAL_ERROR, "call %r: malformed error answer %r" % (name, err))
        raise ProtocolError(err["code"], str(err.get("message", "")), err.get("data"))
    result = msg.get("result")
    if result is None:
        return None
    if not isinstance(result, dict):
        raise ProtocolError(INTERNAL_ERROR, "call %r: malformed result %r: not an object" % (name, result))
    return result.get("output")


_ROUTES = {
    "intercept": _Session.intercept,
    "strategy/invoke": _Session.strategy,
    "provider/invoke": _Session.provider,
    "action/run": _Session.action,
    "contribution/invoke": _Session.contribution,  # protocol 1.1
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


def _host_features(params):
    """The features of the host that sent initialize's params: those it
    announced when it speaks 1.4 or later, else those its version implies
    (docs/protocol.md section 4.6)."""
    version = params.get("protocol_version")
    if not isinstance(version, str):
        return frozenset()
    minor = _minor(version)
    if minor >= 4:
        announced = params.get("features")
        if not isinstance(announced, list):
            return frozenset()
        return frozenset(f for f in announced if f in FEATURES)
    if minor == 0:
        return frozenset()
    implied = {FEATURE_CALLS, FEATURE_CANCEL, FEATURE_CONTRIBUTIONS, FEATURE_STREAMS, FEATURE_TRACE}
    if minor >= 3:
        implied.add(FEATURE_PROGRESS)
    return frozenset(implied)


def _minor(version):
    """The minor number of a semantic version, 0 when it has none."""
    s = version[1:] if version.startswith("v") else version
    parts = s.split(".")
    if len(parts) < 2:
        return 0
    digits = ""
    for ch in parts[1]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else 0


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
