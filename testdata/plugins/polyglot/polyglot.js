#!/usr/bin/env node
'use strict';
// The Node.js one of the polyglot test plugins, on the Node.js SDK (its
// extkernel.js is copied next to it): main.go describes the script its
// provider "run" acts on; this one has no "loop".

const { Plugin, ProtocolError, codes, progress, features } = require('./extkernel');

const LANG = 'node';
const NAME = process.env.EXTKERNEL_PLUGIN_NAME;

const p = new Plugin(NAME, process.env.EXTKERNEL_PLUGIN_VERSION);
for (const kv of (process.env.POLYGLOT_PROVIDES || '').split(',').filter(Boolean)) {
  const at = kv.indexOf('@');
  p.provide(kv.slice(0, at), kv.slice(at + 1));
}

function notify(event) {
  p.notify(event, { plugin: NAME, lang: LANG });
}

// Works ms milliseconds (until cancelled when 0), reporting progress every
// every milliseconds (none when 0).
async function work(ms, every, signal) {
  const end = ms ? Date.now() + ms : undefined;
  for (;;) {
    const now = Date.now();
    if (end !== undefined && now >= end) return { worked: LANG };
    let wait = every || undefined;
    if (end !== undefined) wait = wait === undefined ? end - now : Math.min(wait, end - now);
    const aborted = await new Promise((resolve) => {
      if (signal.aborted) return resolve(true);
      const onAbort = () => { clearTimeout(timer); resolve(true); };
      const timer = wait === undefined ? undefined : setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(false);
      }, wait);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    if (aborted) throw new ProtocolError(codes.REQUEST_CANCELLED, 'polyglot: cancelled');
    if (every) progress('working');
  }
}

p.provider('run', 'runs its input as a script', async (script, signal) => {
  if (script === null || typeof script !== 'object') {
    throw new ProtocolError(codes.INVALID_PARAMS, 'polyglot: input is not a script');
  }
  if (script.notify) notify(script.notify);
  if (script.block) {
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    notify('cancelled');
    throw new ProtocolError(codes.REQUEST_CANCELLED, 'polyglot: cancelled');
  }
  if (script.read) {
    try {
      return { read: require('fs').readFileSync(script.read, 'utf8') };
    } catch (e) {
      return { read_error: e.message };
    }
  }
  if (script.work) return work(script.work.ms || 0, script.work.every || 0, signal);
  if (script.features) {
    const names = [...Object.values(features), 'telepathy'];
    return { host_features: names.filter((f) => p.hostSupports(f)), lang: LANG };
  }
  if (script.progress) {
    for (let i = 0; i < script.progress; i++) progress('step');
    return { progressed: script.progress };
  }
  if (script.call) {
    try {
      // In the handler's async context: the call's parent is this request.
      const out = await p.call(script.call.capability, script.call.method, script.call.input);
      return { output: out === undefined ? null : out };
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      return { error: { code: e.code, message: e.message }, type: e.constructor.name };
    }
  }
  return { echo: script.echo === undefined ? null : script.echo, lang: LANG, plugin: NAME };
});

if (require.main === module) p.serve();
