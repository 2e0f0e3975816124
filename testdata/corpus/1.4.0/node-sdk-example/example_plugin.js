#!/usr/bin/env node
'use strict';
// An example extkernel plugin built with the Node.js SDK. It redacts
// secrets before tools run, echoes provider input, counts words, has a slow
// provider that honours cancellation, a provider that recalls notes through
// the storage.kv capability it requires (protocol 1.1), a UI action, and a
// "tool" (a kind its host declares, protocol 1.1) that upper-cases a string.
// Its manifest is plugin.json next to it.

const { Plugin, ProtocolError, Continue, Modify, Deny, codes } = require('./extkernel');

const SECRET = /(API_KEY|TOKEN)=\S+/g;

const p = new Plugin('example-node', '1.0.0');
p.provide('example.redact', '1.0.0');

p.onInitialize(async (params) => {
  p.log.info('initialized', { host: params.host.name, data_dir: params.plugin.data_dir });
});

p.intercept('tool.before', async (point, payload) => {
  const command = (payload && payload.command) || '';
  if (command.includes('rm -rf /')) return Deny('refusing to delete the root directory');
  if (command.match(SECRET)) return Modify({ command: command.replace(SECRET, '$1=[redacted]') });
  return Continue();
});

p.provider('echo', 'returns its input', async (input) => input);

p.provider('wordcount', 'counts the words of a string', async (input) => {
  if (typeof input !== 'string') throw new ProtocolError(codes.INVALID_PARAMS, 'input must be a string');
  return input.split(/\s+/).filter(Boolean).length;
});

p.provider('slow', 'waits until cancelled (at most 30 s)', (input, signal) => new Promise((resolve) => {
  const started = Date.now();
  const timer = setTimeout(() => resolve('done'), 30000);
  signal.addEventListener('abort', () => {
    clearTimeout(timer);
    p.log.info('slow call cancelled', { after_ms: Date.now() - started });
    resolve(null);
  });
}));

p.provider('recall', 'recalls the note on a topic from storage.kv', async (input) => {
  const topic = input && input.topic;
  if (typeof topic !== 'string') throw new ProtocolError(codes.INVALID_PARAMS, 'input must be {"topic": string}');
  try {
    // Called in the handler's async context: the call's parent is this
    // request, and the handler's signal aborts the call.
    return { recalled: await p.call('storage.kv', 'get', { key: topic }) };
  } catch (e) {
    if (!(e instanceof ProtocolError) || e.code !== codes.NOT_AVAILABLE) throw e; // the requirement is optional
    return { recalled: null, reason: e.message };
  }
});

p.contribute('tool', 'text.upper', async (input) => {
  if (typeof input !== 'string') throw new ProtocolError(codes.INVALID_PARAMS, 'input must be a string');
  return input.toUpperCase();
}, { title: 'Upper-case a text', data: { input: { type: 'string' } } });

p.action('hello', 'Say hello', 'toolbar', async (context) => {
  p.notify('greeted', { who: context });
  return { greeting: `hello ${context || 'world'}` };
});

if (require.main === module) p.serve();
