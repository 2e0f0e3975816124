#!/usr/bin/env node
'use strict';
// An example of streams (protocol 1.1) with the Node.js SDK: a streaming
// provider, and a provider that consumes a capability's stream through the
// host. Its manifest would require text.generate, which another package
// provides with a streaming method "tokens" (docs/protocol.md §5.12).

const { Plugin } = require('./extkernel');

const p = new Plugin('example-stream-node', '1.0.0');

// Each value is one chunk. The generator is not resumed while the host's
// window is full, and it is closed (its finally runs) when the host
// cancels. A host that asks for no stream gets the array.
p.streamProvider('countdown', 'streams n, n-1, ..., 1', async function* countdown(input) {
  for (let i = Number(input || 0); i > 0; i--) yield i;
});

// Made in the handler: the call's parent is this request. Leaving the loop
// early would cancel the call.
p.provider('digest', 'joins the tokens text.generate streams', async (input) => {
  let text = '';
  for await (const token of p.callStream('text.generate', 'tokens', input)) text += token;
  return text;
});

if (require.main === module) p.serve();
