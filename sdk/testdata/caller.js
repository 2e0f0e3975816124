#!/usr/bin/env node
'use strict';
// The caller plugin of the SDK's call tests (sdk/caller_test.go describes
// it), written with the Node.js SDK.

const path = require('path');
const { Plugin, ProtocolError, CallRefused } = require(path.join(__dirname, '..', 'node', 'extkernel'));

const p = new Plugin('caller', '1.0.0');

async function relay(input) {
  const options = input.timeout_ms ? { signal: AbortSignal.timeout(input.timeout_ms) } : {};
  try {
    const out = await p.call(input.capability, input.method, input.input, options);
    return { got: out === undefined ? null : out };
  } catch (e) {
    if (e instanceof CallRefused) return { refused: e.message };
    if (e && e.name === 'TimeoutError') return { timeout: true };
    if (e instanceof ProtocolError) return { code: e.code, message: e.message };
    throw e;
  }
}

p.provider('relay', 'calls the capability method its input names', (input) => relay(input));

// background's calls run in a loop started when the module loaded, so
// outside any handler's async context.
const queue = [];
let wake = () => {};
(async () => {
  for (;;) {
    while (!queue.length) await new Promise((resolve) => { wake = resolve; });
    p.notify('background', await relay(queue.shift()));
  }
})();

p.provider('background', 'makes the same call outside any handler', async (input) => {
  queue.push(input);
  wake();
  return 'started';
});

// late answers at once and leaves a timer, in its handler's async context,
// that makes the call once the answer was written.
p.provider('late', 'makes the call once its request was answered', async (input) => {
  setTimeout(async () => p.notify('late', await relay(input)), 0);
  return 'started';
});

p.provider('echo', 'answers its input', async (input) => input);

if (require.main === module) p.serve();
