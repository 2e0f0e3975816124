'use strict';
/**
 * extkernel plugin SDK for Node.js (standard library only, CommonJS).
 *
 * The plugin side of the extkernel protocol (docs/protocol.md), with the
 * same semantics as the Go SDK (package sdk):
 *
 *   const { Plugin, Continue } = require('./extkernel');
 *   const p = new Plugin('redactor', '1.0.0');
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
 * Errors: a handler that throws a ProtocolError answers with its code and
 * message; any other throw answers PLUGIN_ERROR with the error's message
 * (its stack is logged). A call naming an undeclared point, slot, provider
 * or action gets UNKNOWN_TARGET. Only protocol frames go to stdout; serve()
 * sends console.log/info/debug to stderr. Logs are hclog JSON lines on
 * stderr, which the host parses keeping level and fields.
 */

const PROTOCOL_VERSION = '1.0.0';
const MAX_FRAME = 4 << 20;
const DRAIN_WAIT_MS = 1000;
const CANCEL_WAIT_MS = 500;

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
  constructor(name, version) {
    this.name = name;
    this.version = version;
    this.log = new Logger(name);
    this.decls = { provides: [], interceptors: [], strategies: [], providers: [], actions: [] };
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

  /** Registers handler(context, signal) -> output as UI action id. */
  action(id, title, placement, handler) {
    const decl = { id, title };
    if (placement) decl.placement = placement;
    this.add('action', id, handler, this.decls.actions, decl);
  }

  /** Sets fn(params) (may be async) run while answering initialize; throwing fails the handshake. */
  onInitialize(fn) {
    this.onInit = fn;
  }

  add(kind, name, handler, list, decl) {
    if (this.session) throw new Error(`register ${kind} ${JSON.stringify(name)}: the plugin is serving`);
    if (!name || typeof handler !== 'function') throw new Error(`register ${kind}: need a name and a function`);
    if (this.handlers[kind].has(name)) throw new Error(`register ${kind}: duplicate ${JSON.stringify(name)}`);
    this.handlers[kind].set(name, handler);
    list.push(decl);
  }

  declarations() {
    const res = { protocol_version: PROTOCOL_VERSION, name: this.name, version: this.version };
    for (const [k, v] of Object.entries(this.decls)) if (v.length) res[k] = v.slice();
    return res;
  }

  /** Sends a notify notification; throws before the handshake completed or when not serving. */
  notify(event, data) {
    if (!this.session) throw new Error(`notify ${JSON.stringify(event)}: the plugin is not serving`);
    this.session.notify(event, data);
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
    if (typeof method !== 'string') return false; // a response: the plugin sends no requests
    if (!('id' in msg)) {
      if (method === '$/cancel') this.cancel((msg.params || {}).id);
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
    } else if (routes[method]) {
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
    this.reply(id, this.p.declarations());
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
      result = await this.call(c.method, params, c.controller.signal);
    } catch (e) {
      error = this.wireError(e, c.method);
    }
    if (c.answered) return;
    c.answered = true;
    if (error) this.replyError(c.id, error);
    else this.reply(c.id, result);
  }

  async call(method, params, signal) {
    const [kind, key, arg] = routes[method];
    if (!params || typeof params !== 'object' || Array.isArray(params)) {
      throw new ProtocolError(codes.INVALID_PARAMS, params == null ? 'missing params' : 'invalid params: not an object');
    }
    const name = params[key];
    if (typeof name !== 'string') throw new ProtocolError(codes.INVALID_PARAMS, `invalid params: ${key} must be a string`);
    const handlers = this.p.handlers[kind];
    const h = handlers.get(name);
    if (!h) {
      const declared = [...handlers.keys()].sort().join(', ') || 'none';
      throw new ProtocolError(codes.UNKNOWN_TARGET, `unknown ${kind} ${JSON.stringify(name)} (declared: ${declared})`);
    }
    if (kind === 'point') return checkDecision(await h(name, params[arg], signal));
    return output(await h(params[arg], signal));
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

module.exports = { Plugin, ProtocolError, Logger, Continue, Modify, Deny, codes, PROTOCOL_VERSION, MAX_FRAME };
