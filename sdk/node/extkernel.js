'use strict';
/**
 * extkernel plugin SDK for Node.js (standard library only, CommonJS).
 *
 * The plugin side of the extkernel protocol (docs/protocol.md), with the
 * same semantics as the Go SDK (package sdk):
 *
 *   const { Plugin, Continue } = require('./extkernel');
 *   const p = new Plugin(); // name and version: the manifest's, from the kernel
 *   p.intercept('tool.before', async (point, payload, signal) => Continue());
 *   p.serve();
 *
 * Lifecycle: register declarations, then serve(). The host speaks first;
 * any request before `initialize` is answered with NOT_INITIALIZED.
 * `initialize` is answered with the plugin's identity, PROTOCOL_VERSION and
 * every declaration, after the optional onInitialize hook succeeds. Calls
 * are answered until `shutdown` or the end of stdin; in-flight handlers then
 * get one second to finish, after which their AbortSignals fire, their calls
 * are answered with REQUEST_CANCELLED, and they get half a second more. serve() then exits the process (0, or 1 on a protocol
 * failure).
 *
 * Concurrency: every call runs as its own async task and is answered as soon
 * as it settles; `ping` is answered at once. Each handler gets an
 * AbortSignal that aborts when the host sends `$/cancel` for the call (the
 * call is then answered with REQUEST_CANCELLED at once and the handler's
 * result dropped) or when the drain bound runs out.
 *
 * Calling capabilities (protocol 1.1): `await plugin.call(capability,
 * method, input, { signal })` calls a method of a capability the manifest
 * requires, through the host, and resolves to the callee's output. The
 * SDK keeps serving host requests while calls wait (a callee may call back
 * into this plugin) and routes each answer to its call. Made while a
 * handler runs (in its async context, awaits and timers included), the
 * call names the handler's request as its `parent` (the host derives the
 * call's deadline, cancellation and depth from it), and the handler's
 * AbortSignal aborts it; once the handler's request was answered, a call
 * its context still makes (a timer it left) is refused with CallRefused;
 * outside any handler the call is independent. An
 * abort (of `signal` or of the handler's signal) sends `$/cancel` for the
 * call and rejects with the signal's reason (an AbortError, or the
 * TimeoutError of `AbortSignal.timeout(ms)`). An error answer rejects with
 * a ProtocolError with its code (NOT_AUTHORIZED, NOT_AVAILABLE,
 * DEPTH_EXCEEDED, STALE_GENERATION, ...). CallRefused rejects, with nothing
 * sent, when the plugin is not serving, before the handshake, or when the
 * host does not support the calls feature (a host of protocol 1.0), and
 * when serving ends before the answer comes.
 * The plugin's request ids are "c1", "c2", ...; an answer to no call in
 * flight is ignored.
 *
 * Contributions of host-declared kinds (protocol 1.1): `plugin.contribute(
 * kind, key, handler, { data, title, priority })` declares a contribution
 * of a kind the host declares (such as "tool") at key, which the
 * manifest's runtime.contributes must list, and registers handler(input,
 * signal) -> output for the host's `contribution/invoke`; without a
 * handler the contribution is one the host only reads. It is declared
 * only to a host that supports the contributions feature (1.1 or later).
 *
 * Features (protocol 1.4, docs/protocol.md section 4.6): the plugin answers
 * initialize with PROTOCOL_VERSION 1.4.0 and announces FEATURES, every
 * optional feature the SDK implements. `plugin.hostSupports(feature)` says
 * whether the host serves one (features.CALLS, CANCEL, CONTRIBUTIONS,
 * PROGRESS, STREAMS, TRACE): what a host of 1.4 or later announced, or
 * what an older host's version implies. The SDK uses only those: without
 * calls, call() and callStream() reject with CallRefused (without streams,
 * callStream() does); without progress, progress() sends nothing; without
 * cancel, a call given up is not cancelled (its late answer is dropped);
 * without trace, calls carry no traceparent. A plugin tests hostSupports,
 * not the version.
 *
 * Streams (protocol 1.1, docs/protocol.md section 5.12):
 * `p.streamProvider(ref, description, async function* (input, signal) {...})`
 * registers an async generator whose values are the chunks of its answer.
 * When the host asks for a stream, each value is sent as a `$/stream/chunk`
 * once the host's window allows (the generator is not resumed while the
 * window is full, so a slow consumer holds it back); when the host cancels,
 * the signal aborts and the generator is closed (its `finally` runs). When
 * the host asks for no stream (a 1.0 host), the values are answered as one
 * output, their array. `p.callStream(capability, method, input, { signal,
 * window })` returns an async iterable over the chunks of a capability's
 * stream (the provider's output, for one that does not stream, is the one
 * chunk); it acknowledges chunks as they are taken, and leaving the loop
 * early (`break`, `return`, a throw) or an abort cancels the call. Its
 * errors are call()'s.
 *
 * Errors: a handler that throws a ProtocolError answers with its code and
 * message; any other throw answers PLUGIN_ERROR with the error's message
 * (its stack is logged). A call naming an undeclared point, slot, provider
 * or action gets UNKNOWN_TARGET. Only protocol frames go to stdout; serve()
 * sends console.log/info/debug to stderr. Logs are hclog JSON lines on
 * stderr, which the host parses keeping level and fields.
 */

const { AsyncLocalStorage } = require('async_hooks');

const PROTOCOL_VERSION = '1.4.0';

/** The optional protocol features (protocol 1.4, docs/protocol.md §4.6), by name. */
const features = Object.freeze({
  CALLS: 'calls', CANCEL: 'cancel', CONTRIBUTIONS: 'contributions', PROGRESS: 'progress', STREAMS: 'streams', TRACE: 'trace',
});
/** The features the plugin announces: every one the SDK implements. */
const FEATURES = Object.freeze(Object.values(features));
const MAX_FRAME = 4 << 20;
const DRAIN_WAIT_MS = 1000;
const CANCEL_WAIT_MS = 500;
/** Streams: the window asked for unless told otherwise, and the largest one a request may ask for. */
const DEFAULT_STREAM_WINDOW = 16;
const MAX_STREAM_WINDOW = 1024;

const codes = Object.freeze({
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  REQUEST_CANCELLED: -32800,
  NOT_INITIALIZED: -32002,
  UNSUPPORTED_VERSION: -32003,
  UNKNOWN_TARGET: -32004,
  NOT_AUTHORIZED: -32005,
  NOT_AVAILABLE: -32006,
  DEPTH_EXCEEDED: -32007,
  STALE_GENERATION: -32008,
  PLUGIN_ERROR: -32000,
});

/** An error that crosses the wire with its code. */
class ProtocolError extends Error {
  constructor(code, message, data) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
    this.data = data;
  }

  toWire() {
    const e = { code: this.code, message: this.message };
    if (this.data !== undefined) e.data = this.data;
    return e;
  }
}

/**
 * A call() that could not be made or completed: the plugin is not serving,
 * the handshake is not complete, the host speaks protocol 1.0 (calls need
 * 1.1), the handler whose async context makes the call was already
 * answered, or serving ended before the host answered. Nothing is sent in
 * the first four cases.
 */
class CallRefused extends Error {
  constructor(message) {
    super(message);
    this.name = 'CallRefused';
  }
}

/** The handler a piece of code runs for: { session, call, id, signal, traceparent } (call: the host request, with its answered flag), in the handler's async context. */
const handlerContext = new AsyncLocalStorage();

/** A W3C Trace Context traceparent of version 00 (docs/protocol.md §5.13). */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Returns the W3C traceparent of the host request the current handler serves
 * (its async context), or undefined. A plugin that traces takes it as the
 * parent of its own spans; plugin.call sends it on with the handler's calls.
 */
function traceparent() {
  const h = handlerContext.getStore();
  return h ? h.traceparent : undefined;
}

/**
 * Reports progress on the host request the current handler serves (its async
 * context), with a $/progress notification (protocol 1.3, docs/protocol.md
 * §5.15): message says what the handler is doing, fraction (0 to 1) how much
 * is done; either may be undefined. A host of protocol 1.3 or later extends
 * the request's timeout with each progress, up to its maximum call duration,
 * so a handler that runs longer than the host's timeout reports progress more
 * often than that timeout; to a host without the progress feature (one
 * before 1.3, which would ignore it) nothing is sent. Throws outside a
 * handler's async context or before the handshake, and a RangeError for a
 * fraction out of [0, 1].
 */
function progress(message, fraction) {
  const h = handlerContext.getStore();
  if (!h) throw new Error('progress: not called in a handler\'s async context');
  if (fraction !== undefined && !(typeof fraction === 'number' && fraction >= 0 && fraction <= 1)) {
    throw new RangeError(`progress: fraction ${fraction} is not in [0, 1]`);
  }
  if (!h.session.initialized) throw new Error('progress: handshake not complete');
  const params = { id: h.id };
  if (message !== undefined) params.message = String(message);
  if (fraction !== undefined) params.fraction = fraction;
  if (h.session.hostFeatures.has(features.PROGRESS)) h.session.write({ method: '$/progress', params });
}

/** The decision that passes the payload on unchanged (also: return undefined). */
const Continue = () => ({ decision: 'continue' });
/** The decision that replaces the payload for the rest of the chain. */
const Modify = (payload) => ({ decision: 'modify', payload });
/** The decision that stops the chain, with the reason shown to the user. */
const Deny = (reason) => ({ decision: 'deny', reason });

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];

/** Writes hclog JSON lines to a stream (stderr). */
class Logger {
  constructor(name, stream = process.stderr, level = 'info') {
    this.name = name;
    this.stream = stream;
    this.level = level;
    for (const l of LEVELS) this[l] = (message, fields) => this.log(l, message, fields);
  }

  log(level, message, fields = {}) {
    if (LEVELS.indexOf(level) < LEVELS.indexOf(this.level)) return;
    const entry = { '@level': level, '@message': message, '@module': this.name, '@timestamp': new Date().toISOString(), ...fields };
    try {
      this.stream.write(JSON.stringify(entry) + '\n');
    } catch (_) { /* stderr gone: nothing to do */ }
  }
}

function major(version) {
  const m = /^v?(\d+)(\.|$)/.exec(typeof version === 'string' ? version : '');
  if (!m) throw new Error(`${JSON.stringify(version)} is not a semantic version`);
  return Number(m[1]);
}

/** The minor number of a semantic version, 0 when it has none. */
function minor(version) {
  const m = /^v?\d+\.(\d+)/.exec(typeof version === 'string' ? version : '');
  return m ? Number(m[1]) : 0;
}

/**
 * The features of the host that sent initialize's params: those it
 * announced when it speaks 1.4 or later, else those its version implies
 * (docs/protocol.md §4.6).
 */
function hostFeaturesOf(params) {
  const m = minor(params.protocol_version);
  if (m >= 4) {
    return new Set(Array.isArray(params.features) ? params.features.filter((f) => FEATURES.includes(f)) : []);
  }
  if (m === 0) return new Set();
  const implied = [features.CALLS, features.CANCEL, features.CONTRIBUTIONS, features.STREAMS, features.TRACE];
  if (m >= 3) implied.push(features.PROGRESS);
  return new Set(implied);
}

function checkVersion(host) {
  let hm;
  try {
    hm = major(host);
  } catch (e) {
    throw new ProtocolError(codes.INVALID_PARAMS, `initialize: protocol_version: ${e.message}`);
  }
  const pm = major(PROTOCOL_VERSION);
  if (hm > pm) {
    throw new ProtocolError(codes.UNSUPPORTED_VERSION,
      `host speaks protocol ${host}, this plugin speaks ${PROTOCOL_VERSION}: upgrade the plugin (its extkernel SDK)`);
  }
  if (hm < pm) {
    throw new ProtocolError(codes.UNSUPPORTED_VERSION,
      `host speaks protocol ${host}, this plugin speaks ${PROTOCOL_VERSION}: upgrade the host`);
  }
}

/** One plugin: its identity, declarations and handlers. */
class Plugin {
  /**
   * name and version answer initialize; undefined (or empty) takes them from
   * the environment the kernel sets, EXTKERNEL_PLUGIN_NAME and
   * EXTKERNEL_PLUGIN_VERSION (the manifest's, docs/protocol.md §10). A value
   * given wins; it should match the manifest's.
   */
  constructor(name, version) {
    this.name = name || process.env.EXTKERNEL_PLUGIN_NAME || '';
    this.version = version || process.env.EXTKERNEL_PLUGIN_VERSION || '';
    this.log = new Logger(this.name);
    this.decls = { provides: [], interceptors: [], strategies: [], providers: [], actions: [], contributions: [] };
    this.contributed = new Map(); // "kind key" -> handler, null for read only (protocol 1.1)
    this.handlers = { point: new Map(), slot: new Map(), provider: new Map(), action: new Map() };
    this.onInit = null;
    this.session = null;
  }

  /** Declares that the plugin provides capability at version. */
  provide(capability, version) {
    if (this.decls.provides.some((c) => c.capability === capability)) {
      throw new Error(`provide: duplicate capability ${JSON.stringify(capability)}`);
    }
    this.decls.provides.push({ capability, version });
  }

  /** Registers handler(point, payload, signal) -> decision at point; priority undefined uses the manifest's. */
  intercept(point, handler, priority) {
    const decl = { point };
    if (priority !== undefined) decl.priority = priority;
    this.add('point', point, handler, this.decls.interceptors, decl);
  }

  /** Registers handler(input, signal) -> output for slot. */
  strategy(slot, handler) {
    this.add('slot', slot, handler, this.decls.strategies, { slot });
  }

  /** Registers handler(input, signal) -> output as provider ref. */
  provider(ref, description, handler, schema) {
    const decl = { ref };
    if (description) decl.description = description;
    if (schema !== undefined) decl.schema = schema;
    this.add('provider', ref, handler, this.decls.providers, decl);
  }

  /**
   * Registers handler(input, signal), an async generator function (or any
   * function returning an async or sync iterable), as the streaming
   * provider ref: each value is one chunk of its answer.
   */
  streamProvider(ref, description, handler) {
    const decl = { ref };
    if (description) decl.description = description;
    if (typeof handler !== 'function') throw new Error('register provider: need a name and a function');
    this.add('provider', ref, new StreamHandler(handler), this.decls.providers, decl);
  }

  /** Registers handler(context, signal) -> output as UI action id. */
  action(id, title, placement, handler) {
    const decl = { id, title };
    if (placement) decl.placement = placement;
    this.add('action', id, handler, this.decls.actions, decl);
  }

  /**
   * Declares a contribution of the host-declared kind at key (protocol 1.1)
   * and registers handler(input, signal) -> output for it; handler
   * undefined makes it read only. options: data (any JSON value the host
   * reads), title, priority.
   */
  contribute(kind, key, handler, options = {}) {
    const name = `${kind} ${key}`;
    if (this.session) throw new Error(`contribute ${JSON.stringify(name)}: the plugin is serving`);
    if (!kind || !key) throw new Error('contribute: need a kind and a key');
    if (handler !== undefined && handler !== null && typeof handler !== 'function') throw new Error('contribute: handler must be a function');
    if (this.contributed.has(name)) throw new Error(`contribute: duplicate ${JSON.stringify(name)}`);
    const decl = { kind, key };
    if (options.priority !== undefined) decl.priority = options.priority;
    if (options.title) decl.title = options.title;
    if (options.data !== undefined) decl.data = JSON.parse(JSON.stringify(options.data));
    this.contributed.set(name, handler || null);
    this.decls.contributions.push(decl);
  }

  /** Sets fn(params) (may be async) run while answering initialize; throwing fails the handshake. */
  onInitialize(fn) {
    this.onInit = fn;
  }

  add(kind, name, handler, list, decl) {
    if (this.session) throw new Error(`register ${kind} ${JSON.stringify(name)}: the plugin is serving`);
    if (!name || (typeof handler !== 'function' && !(handler instanceof StreamHandler))) throw new Error(`register ${kind}: need a name and a function`);
    if (this.handlers[kind].has(name)) throw new Error(`register ${kind}: duplicate ${JSON.stringify(name)}`);
    this.handlers[kind].set(name, handler);
    list.push(decl);
  }

  declarations(hostFeatures = new Set(FEATURES)) {
    const res = { protocol_version: PROTOCOL_VERSION, name: this.name, version: this.version };
    const contributions = hostFeatures.has(features.CONTRIBUTIONS);
    for (const [k, v] of Object.entries(this.decls)) if (v.length && (contributions || k !== 'contributions')) res[k] = v.slice();
    res.features = FEATURES.slice();
    return res;
  }

  /**
   * Whether the host the plugin serves supports the optional protocol
   * feature named feature (features.CALLS, ...): one a host of protocol 1.4
   * or later announced in initialize, or one an older host's version implies
   * (none for 1.0; all but progress for 1.1 and 1.2; all six for 1.3). False
   * when not serving or before initialize. A plugin tests this, not the
   * host's version.
   */
  hostSupports(feature) {
    return Boolean(this.session && this.session.hostFeatures.has(feature));
  }

  /** Sends a notify notification; throws before the handshake completed or when not serving. */
  notify(event, data) {
    if (!this.session) throw new Error(`notify ${JSON.stringify(event)}: the plugin is not serving`);
    this.session.notify(event, data);
  }

  /**
   * Calls method of capability (which the manifest must require) through
   * the host and resolves to the callee's output (undefined when it
   * returned none). input undefined sends none; options.signal aborts the
   * call. See the module doc for the parent, cancellation and errors.
   */
  async call(capability, method, input, options = {}) {
    if (!this.session) throw new CallRefused(`call ${JSON.stringify(`${capability}.${method}`)}: the plugin is not serving`);
    return this.session.callHost(capability, method, input, options.signal);
  }

  /**
   * Calls method of capability through the host asking for a stream, and
   * returns an async iterable over its chunks; the call is made when the
   * iteration starts. options.signal aborts it, options.window (default
   * 16) is its window. Leaving the loop early cancels the call.
   */
  callStream(capability, method, input, options = {}) {
    const plugin = this;
    return {
      [Symbol.asyncIterator]() {
        if (!plugin.session) {
          const err = new CallRefused(`call ${JSON.stringify(`${capability}.${method}`)}: the plugin is not serving`);
          return { next: () => Promise.reject(err), return: async () => ({ done: true }) };
        }
        return plugin.session.streamHost(capability, method, input, options);
      },
    };
  }

  /** Serves on stdin/stdout and exits the process. */
  serve() {
    for (const m of ['log', 'info', 'debug']) console[m] = console.error;
    this.serveIO(process.stdin, process.stdout).then(
      () => process.exit(0),
      (err) => {
        this.log.error('plugin stopped on a protocol failure', { error: String(err && err.message) });
        process.exit(1);
      });
  }

  /**
   * Serves reading frames from readable and writing them to writable.
   * Resolves after shutdown or end of input once handlers have finished
   * (bounded); rejects on a fatal protocol failure.
   */
  async serveIO(readable, writable) {
    if (this.session) throw new Error('the plugin is already serving');
    const s = new Session(this, writable);
    this.session = s;
    try {
      await s.readLoop(readable);
    } finally {
      s.endCalls();
      await s.drain();
      await s.flush();
      this.session = null;
    }
  }
}

const routes = {
  'intercept': ['point', 'point', 'payload'],
  'strategy/invoke': ['slot', 'slot', 'input'],
  'provider/invoke': ['provider', 'ref', 'input'],
  'action/run': ['action', 'id', 'context'],
  'contribution/invoke': null, // protocol 1.1: Session.contribution
};

class Session {
  constructor(plugin, writable) {
    this.p = plugin;
    this.log = plugin.log;
    this.out = writable;
    this.initialized = false;
    this.broken = null;
    this.calls = new Map(); // JSON id -> call
    this.active = new Set(); // running handler promises
    this.pending = Promise.resolve(); // last write
    // protocol 1.1 calls: whether the host accepts capability/call, and
    // the plugin's own requests in flight by id; ended once nothing more
    // is read.
    this.hostVersion = undefined;
    this.hostFeatures = new Set(); // protocol 1.4: what the host serves
    this.outgoing = new Map(); // id -> { name, settle(response, error) }
    this.nextCall = 0;
    this.ended = false;
    // streams in flight: produced for host requests (by JSON id), consumed
    // by the plugin's calls (by id)
    this.producing = new Map();
    this.consuming = new Map();
  }

  write(msg) {
    const line = JSON.stringify({ jsonrpc: '2.0', ...msg });
    if (Buffer.byteLength(line) > MAX_FRAME) throw new Error(`frame exceeds ${MAX_FRAME} bytes`);
    if (this.broken) return;
    this.pending = new Promise((resolve) => {
      try {
        this.out.write(line + '\n', (err) => {
          if (err && !this.broken) this.broken = err;
          resolve();
        });
      } catch (err) {
        this.broken = err;
        resolve();
      }
    });
  }

  flush() { return this.pending; }

  reply(id, result) {
    try {
      this.write({ id, result });
    } catch (e) {
      this.write({ id, error: { code: codes.INTERNAL_ERROR, message: `encode result: ${e.message}` } });
    }
  }

  replyError(id, err) { this.write({ id, error: err.toWire() }); }

  notify(event, data) {
    if (!this.initialized) throw new Error(`notify ${JSON.stringify(event)}: handshake not complete`);
    const params = { event };
    if (data !== undefined) params.data = data;
    this.write({ method: 'notify', params });
  }

  async readLoop(readable) {
    let buf = Buffer.alloc(0);
    for await (const chunk of readable) {
      buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
      let nl;
      while ((nl = buf.indexOf(0x0a)) >= 0) {
        const line = buf.subarray(0, nl);
        buf = buf.subarray(nl + 1);
        if (line.length > MAX_FRAME + 1) throw new Error(`frame exceeds ${MAX_FRAME} bytes`);
        if (await this.frame(line)) return; // shutdown
      }
      if (buf.length > MAX_FRAME) throw new Error(`frame exceeds ${MAX_FRAME} bytes`);
      if (this.broken) throw new Error(`write to host: ${this.broken.message}`);
    }
    if (buf.length && await this.frame(buf)) return;
  }

  /** Handles one line; resolves true after shutdown. */
  async frame(line) {
    const text = line.toString('utf8').trim();
    if (!text) return false;
    let msg;
    try {
      msg = JSON.parse(text);
    } catch (e) {
      this.log.warn('malformed frame from host', { error: e.message });
      this.write({ id: null, error: { code: codes.PARSE_ERROR, message: `not JSON: ${e.message}` } });
      return false;
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg) || msg.jsonrpc !== '2.0') {
      this.write({ id: null, error: { code: codes.INVALID_REQUEST, message: 'not a JSON-RPC 2.0 message' } });
      return false;
    }
    return this.dispatch(msg);
  }

  async dispatch(msg) {
    const { method, id } = msg;
    if (typeof method !== 'string') { // a response to one of the plugin's calls
      this.answered(id, msg);
      return false;
    }
    if (!('id' in msg)) {
      const params = msg.params && typeof msg.params === 'object' ? msg.params : {};
      if (method === '$/cancel') this.cancel(params.id);
      else if (method === '$/stream/ack') this.streamAck(params);
      else if (method === '$/stream/chunk') this.streamChunk(params);
      return false;
    }
    if (method === 'initialize') {
      await this.initialize(id, msg.params);
    } else if (!this.initialized) {
      this.replyError(id, new ProtocolError(codes.NOT_INITIALIZED, `${method} before initialize`));
    } else if (method === 'ping') {
      this.reply(id, {});
    } else if (method === 'shutdown') {
      this.log.debug('shutdown requested');
      this.reply(id, {});
      return true;
    } else if (Object.prototype.hasOwnProperty.call(routes, method)) {
      this.spawn(id, method, msg.params);
    } else {
      this.replyError(id, new ProtocolError(codes.METHOD_NOT_FOUND, `method ${JSON.stringify(method)} not found`));
    }
    return false;
  }

  async initialize(id, params) {
    if (this.initialized) {
      this.replyError(id, new ProtocolError(codes.INVALID_REQUEST, 'initialize: already initialized'));
      return;
    }
    try {
      if (!params || typeof params !== 'object') throw new ProtocolError(codes.INVALID_PARAMS, 'missing params');
      checkVersion(params.protocol_version);
      if (this.p.onInit) await this.p.onInit(params);
    } catch (e) {
      this.replyError(id, this.wireError(e, 'initialize'));
      return;
    }
    this.hostVersion = params.protocol_version;
    this.hostFeatures = hostFeaturesOf(params);
    this.reply(id, this.p.declarations(this.hostFeatures));
    this.initialized = true;
  }

  cancel(id) {
    const c = this.calls.get(JSON.stringify(id));
    if (!c) return;
    c.controller.abort();
    if (!c.answered) {
      c.answered = true;
      this.replyError(c.id, new ProtocolError(codes.REQUEST_CANCELLED, `${c.method} cancelled by the host`));
    }
  }

  spawn(id, method, params) {
    const key = JSON.stringify(id);
    if (this.calls.has(key)) {
      this.replyError(id, new ProtocolError(codes.INVALID_REQUEST, `${method}: request id ${key} is already in flight`));
      return;
    }
    const c = { id, method, controller: new AbortController(), answered: false };
    this.calls.set(key, c);
    const task = this.run(c, params).finally(() => {
      if (this.calls.get(key) === c) this.calls.delete(key);
      this.active.delete(task);
    });
    this.active.add(task);
  }

  async run(c, params) {
    let result, error;
    try {
      const tp = params && typeof params.traceparent === 'string' && TRACEPARENT.test(params.traceparent) ? params.traceparent : undefined;
      const handler = { session: this, call: c, id: c.id, signal: c.controller.signal, traceparent: tp };
      result = await handlerContext.run(handler, () => this.invoke(c.method, params, c.controller.signal));
    } catch (e) {
      error = this.wireError(e, c.method);
    }
    if (c.answered) return;
    c.answered = true;
    if (error) this.replyError(c.id, error);
    else this.reply(c.id, result);
  }

  async invoke(method, params, signal) {
    if (!params || typeof params !== 'object' || Array.isArray(params)) {
      throw new ProtocolError(codes.INVALID_PARAMS, params == null ? 'missing params' : 'invalid params: not an object');
    }
    if (routes[method] === null) return this.contribution(params, signal);
    const [kind, key, arg] = routes[method];
    const name = params[key];
    if (typeof name !== 'string') throw new ProtocolError(codes.INVALID_PARAMS, `invalid params: ${key} must be a string`);
    const handlers = this.p.handlers[kind];
    const h = handlers.get(name);
    if (!h) {
      const declared = [...handlers.keys()].sort().join(', ') || 'none';
      throw new ProtocolError(codes.UNKNOWN_TARGET, `unknown ${kind} ${JSON.stringify(name)} (declared: ${declared})`);
    }
    if (kind === 'point') return checkDecision(await h(name, params[arg], signal));
    if (h instanceof StreamHandler) return this.serveStream(params, h.fn, signal);
    return output(await h(params[arg], signal));
  }

  /** Runs the handler of the contribution contribution/invoke names. */
  async contribution(params, signal) {
    for (const k of ['kind', 'key']) {
      if (typeof params[k] !== 'string') throw new ProtocolError(codes.INVALID_PARAMS, `invalid params: ${k} must be a string`);
    }
    const name = `${params.kind} ${params.key}`;
    const h = this.p.contributed.get(name);
    if (h === undefined) {
      const declared = [...this.p.contributed.keys()].sort().join(', ') || 'none';
      throw new ProtocolError(codes.UNKNOWN_TARGET, `unknown contribution ${JSON.stringify(name)} (declared: ${declared})`);
    }
    if (h === null) {
      throw new ProtocolError(codes.UNKNOWN_TARGET, `${params.kind} ${JSON.stringify(params.key)} has no handler: the host only reads it`);
    }
    return output(await h(params.input, signal));
  }

  /**
   * Runs the streaming provider fn for the request of the running handler:
   * its values sent as chunks when the host asks for a stream, else
   * answered as one output, their array.
   */
  async serveStream(params, fn, signal) {
    const stream = params.stream;
    const values = fn(params.input, signal);
    if (stream === undefined || stream === null) {
      const items = [];
      for await (const v of values) items.push(v);
      return output(items);
    }
    const window = stream && stream.window;
    if (!Number.isInteger(window) || window < 1 || window > MAX_STREAM_WINDOW) {
      if (values && typeof values.return === 'function') await values.return();
      throw new ProtocolError(codes.INVALID_PARAMS, `provider/invoke: stream window ${JSON.stringify(window)} is not between 1 and ${MAX_STREAM_WINDOW}`);
    }
    const windowBytes = stream.window_bytes === undefined ? 0 : stream.window_bytes;
    if (!Number.isInteger(windowBytes) || windowBytes < 0) {
      if (values && typeof values.return === 'function') await values.return();
      throw new ProtocolError(codes.INVALID_PARAMS, `provider/invoke: stream window_bytes ${JSON.stringify(windowBytes)} is not a size in bytes`);
    }
    const { id } = handlerContext.getStore();
    const key = JSON.stringify(id);
    // The window of chunks and, when the host asks for one (protocol 1.2),
    // of bytes: the sizes of the chunks sent and not acknowledged, in order.
    const p = { window, windowBytes, sent: 0, acked: 0, unacked: [], bytes: 0, wake: () => {} };
    const room = (size) => p.sent < p.acked + window &&
      (!windowBytes || p.sent === p.acked || p.bytes + size <= windowBytes);
    this.producing.set(key, p);
    const stop = () => p.wake();
    signal.addEventListener('abort', stop);
    try {
      for await (const v of values) { // leaving the loop closes the generator
        const data = v === undefined ? null : v;
        const size = Buffer.byteLength(JSON.stringify(data)); // the data's JSON text, as write serializes it
        while (!room(size) && !signal.aborted && !this.ended) {
          await new Promise((resolve) => { p.wake = resolve; });
        }
        if (signal.aborted || this.ended) break;
        p.sent++;
        p.unacked.push(size);
        p.bytes += size;
        this.write({ method: '$/stream/chunk', params: { id, seq: p.sent, data } });
      }
    } finally {
      signal.removeEventListener('abort', stop);
      this.producing.delete(key);
    }
    if (signal.aborted || this.ended) {
      throw new ProtocolError(codes.REQUEST_CANCELLED, "provider/invoke cancelled: the stream's consumer went away");
    }
    return {};
  }

  /** The host's $/stream/ack for a stream the plugin produces. */
  streamAck(params) {
    const p = this.producing.get(JSON.stringify(params.id));
    if (!p || !Number.isInteger(params.seq)) return;
    const seq = Math.min(params.seq, p.sent);
    for (; p.acked < seq; p.acked++) p.bytes -= p.unacked.shift();
    p.wake();
  }

  /** The host's $/stream/chunk for a stream one of the plugin's calls consumes; one for no such stream is ignored. */
  streamChunk(params) {
    const st = typeof params.id === 'string' ? this.consuming.get(params.id) : undefined;
    if (!st || st.fault) return;
    if (params.seq !== st.received + 1) {
      st.fault = `chunk ${JSON.stringify(params.seq)} after chunk ${st.received}`;
    } else if (params.seq > st.acked + st.window || st.chunks.length >= st.window) {
      // judged against the acks sent, when it arrives, however fast the chunks are taken
      st.fault = `chunk ${params.seq} is beyond the window: ${st.acked} acknowledged, window ${st.window}`;
    } else {
      st.received = params.seq;
      st.chunks.push(params.data === undefined ? null : params.data);
    }
    st.wake();
  }

  /** Sends capability/call asking for a stream and yields its chunks (callStream). */
  async *streamHost(capability, method, input, options) {
    const name = JSON.stringify(`${capability}.${method}`);
    const window = options.window === undefined ? DEFAULT_STREAM_WINDOW : options.window;
    if (!Number.isInteger(window) || window < 1 || window > MAX_STREAM_WINDOW) {
      throw new Error(`callStream: window ${JSON.stringify(window)} is not between 1 and ${MAX_STREAM_WINDOW}`);
    }
    const { id, signals, params } = this.openCall(name, capability, method, input, options.signal, { window });
    const st = { window, chunks: [], received: 0, acked: 0, fault: null, final: null, ended: null, wake: () => {} };
    this.consuming.set(id, st);
    this.outgoing.set(id, { name, settle: (msg, err) => { st.final = msg; st.ended = err; st.wake(); } });
    const onAbort = () => st.wake();
    for (const sig of signals) sig.addEventListener('abort', onAbort);
    const every = Math.ceil(window / 2);
    let taken = 0;
    let acked = 0;
    let cancel = true;
    try {
      this.write({ id, method: 'capability/call', params });
      for (;;) {
        // first: no chunk is taken after the one that broke the flow control
        if (st.fault) throw new ProtocolError(codes.INTERNAL_ERROR, `call ${name}: stream: ${st.fault}`);
        if (st.chunks.length) {
          const chunk = st.chunks.shift();
          if (++taken - acked >= every) {
            acked = st.acked = taken; // counted before the ack is sent
            this.write({ method: '$/stream/ack', params: { id, seq: acked } });
          }
          yield chunk;
          continue;
        }
        if (st.fault) throw new ProtocolError(codes.INTERNAL_ERROR, `call ${name}: stream: ${st.fault}`);
        if (st.ended) { cancel = false; throw st.ended; }
        if (st.final) {
          cancel = false;
          const out = await new Promise((resolve, reject) => settleCall(name, st.final, resolve, reject));
          if (out !== undefined) yield out;
          return;
        }
        const aborted = signals.find((sig) => sig.aborted);
        if (aborted) throw abortReason(aborted, name);
        await new Promise((resolve) => { st.wake = resolve; });
      }
    } finally {
      for (const sig of signals) sig.removeEventListener('abort', onAbort);
      this.consuming.delete(id);
      if (this.outgoing.delete(id) && cancel) this.cancelOut(id);
    }
  }

  /**
   * Checks that a call can be made and returns its id, the signals that
   * abort it (options' and the running handler's) and its params (asking
   * for stream when given); throws as callHost does.
   */
  openCall(name, capability, method, input, signal, stream) {
    if (!this.initialized) throw new CallRefused(`call ${name}: handshake not complete`);
    if (!this.hostFeatures.has(features.CALLS)) {
      throw new CallRefused(`call ${name}: host speaks protocol ${this.hostVersion} without the "calls" feature`);
    }
    if (stream && !this.hostFeatures.has(features.STREAMS)) {
      throw new CallRefused(`call ${name}: host speaks protocol ${this.hostVersion} without the "streams" feature`);
    }
    if (this.ended) throw new CallRefused(`call ${name}: the plugin stopped serving`);
    const h = handlerContext.getStore();
    const handler = h && h.session === this ? h : undefined;
    const signals = [signal, handler && handler.signal].filter(Boolean);
    const aborted = signals.find((sig) => sig.aborted);
    if (aborted) throw abortReason(aborted, name);
    // Work the handler left running after its answer (a timer, a promise
    // not awaited) keeps its async context: a call naming a parent already
    // answered would be malformed to the host (docs/protocol.md §5.11).
    if (handler && handler.call.answered) {
      throw new CallRefused(`call ${name}: the request it would name as parent (${handler.call.method}) was already answered`);
    }
    const params = { capability, method };
    if (input !== undefined) params.input = input;
    if (handler && handler.traceparent && this.hostFeatures.has(features.TRACE)) params.traceparent = handler.traceparent;
    if (handler) params.parent = handler.id;
    if (stream) params.stream = stream;
    return { id: `c${++this.nextCall}`, signals, params };
  }

  /** Sends capability/call and resolves to the output of its answer. */
  callHost(capability, method, input, signal) {
    const name = JSON.stringify(`${capability}.${method}`);
    const { id, signals, params } = this.openCall(name, capability, method, input, signal);
    return new Promise((resolve, reject) => {
      const onAbort = (ev) => {
        if (!this.outgoing.delete(id)) return;
        cleanup();
        this.cancelOut(id);
        reject(abortReason(ev.target, name));
      };
      const cleanup = () => { for (const sig of signals) sig.removeEventListener('abort', onAbort); };
      this.outgoing.set(id, {
        name,
        settle: (msg, err) => {
          cleanup();
          if (err) reject(err);
          else settleCall(name, msg, resolve, reject);
        },
      });
      for (const sig of signals) sig.addEventListener('abort', onAbort);
      try {
        this.write({ id, method: 'capability/call', params });
      } catch (e) {
        this.outgoing.delete(id);
        cleanup();
        reject(e);
      }
    });
  }

  /** Sends $/cancel for the plugin's call id, to a host that supports the cancel feature (another one's answer is dropped). */
  cancelOut(id) {
    if (this.hostFeatures.has(features.CANCEL)) this.write({ method: '$/cancel', params: { id } });
  }

  /** Routes the host's response to the call it answers; an answer to no call in flight is ignored. */
  answered(id, msg) {
    const out = typeof id === 'string' ? this.outgoing.get(id) : undefined;
    if (!out) {
      this.log.debug('ignoring response to an unknown request', { id });
      return;
    }
    this.outgoing.delete(id);
    out.settle(msg);
  }

  /** Nothing more is read: every call in flight ends. */
  endCalls() {
    this.ended = true;
    for (const p of this.producing.values()) p.wake(); // no ack can come
    const outs = [...this.outgoing.values()];
    this.outgoing.clear();
    for (const out of outs) out.settle(undefined, new CallRefused(`call ${out.name}: serving ended before the host answered`));
  }

  wireError(e, method) {
    if (e instanceof ProtocolError) return e;
    this.log.error('handler failed', { method, error: String(e && e.message), stack: String(e && e.stack) });
    return new ProtocolError(codes.PLUGIN_ERROR, e instanceof Error ? e.message : String(e));
  }

  async drain() {
    if (await settled(this.active, DRAIN_WAIT_MS)) return;
    for (const c of this.calls.values()) {
      c.controller.abort();
      if (!c.answered) {
        c.answered = true;
        this.replyError(c.id, new ProtocolError(codes.REQUEST_CANCELLED, `${c.method} cancelled: the plugin is shutting down`));
      }
    }
    if (!(await settled(this.active, CANCEL_WAIT_MS))) {
      this.log.warn('handlers did not return after cancellation', { count: this.active.size });
    }
  }
}

/** A streaming provider's handler, as registered by streamProvider. */
class StreamHandler {
  constructor(fn) { this.fn = fn; }
}

/** The error an aborted call rejects with: the signal's reason, or a ProtocolError when it has none. */
function abortReason(signal, name) {
  if (signal.reason !== undefined) return signal.reason;
  return new ProtocolError(codes.REQUEST_CANCELLED, `call ${name} cancelled`);
}

/** Settles a call with the host's answer msg: its output, or a ProtocolError. */
function settleCall(name, msg, resolve, reject) {
  if (msg.error !== undefined && msg.error !== null) {
    const e = msg.error;
    if (typeof e !== 'object' || !Number.isInteger(e.code)) {
      reject(new ProtocolError(codes.INTERNAL_ERROR, `call ${name}: malformed error answer ${JSON.stringify(e)}`));
      return;
    }
    reject(new ProtocolError(e.code, String(e.message === undefined ? '' : e.message), e.data));
    return;
  }
  const r = msg.result;
  if (r === undefined || r === null) {
    resolve(undefined);
  } else if (typeof r !== 'object' || Array.isArray(r)) {
    reject(new ProtocolError(codes.INTERNAL_ERROR, `call ${name}: malformed result ${JSON.stringify(r)}: not an object`));
  } else {
    resolve(r.output);
  }
}

/** Resolves true when every promise in set settled within ms, false otherwise. */
function settled(set, ms) {
  if (set.size === 0) return Promise.resolve(true);
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  return Promise.race([Promise.allSettled([...set]).then(() => true), timeout]).finally(() => clearTimeout(timer));
}

function output(value) {
  if (value === undefined || value === null) return {};
  try {
    JSON.stringify(value);
  } catch (e) {
    throw new ProtocolError(codes.INTERNAL_ERROR, `encode output: ${e.message}`);
  }
  return { output: value };
}

function checkDecision(res) {
  if (res === undefined || res === null) return Continue();
  if (typeof res !== 'object') throw new ProtocolError(codes.PLUGIN_ERROR, `interceptor returned ${JSON.stringify(res)}, want a decision`);
  const decision = res.decision === undefined ? 'continue' : res.decision;
  switch (decision) {
    case 'continue':
      return Continue();
    case 'modify':
      if (!('payload' in res) || res.payload === undefined) {
        throw new ProtocolError(codes.PLUGIN_ERROR, 'interceptor decided modify without a payload');
      }
      return { decision: 'modify', payload: res.payload };
    case 'deny':
      return res.reason ? Deny(res.reason) : { decision: 'deny' };
    default:
      throw new ProtocolError(codes.PLUGIN_ERROR, `interceptor returned unknown decision ${JSON.stringify(decision)} (want continue, modify or deny)`);
  }
}

module.exports = {
  Plugin, ProtocolError, CallRefused, Logger, Continue, Modify, Deny, codes, traceparent, progress, PROTOCOL_VERSION, MAX_FRAME,
  DEFAULT_STREAM_WINDOW, MAX_STREAM_WINDOW, FEATURES, features,
};
