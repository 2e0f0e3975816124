#!/usr/bin/env node
'use strict';
// The streams test plugin (testdata/plugins/streamer/main.go describes
// it), written with the Node.js SDK.

const fs = require('fs');
const path = require('path');

const beside = path.join(__dirname, 'extkernel.js'); // copied beside it, in a package
const sdk = require(fs.existsSync(beside) ? beside : path.join(__dirname, '..', 'node', 'extkernel'));
const { Plugin, ProtocolError, codes } = sdk;

const name = process.env.EXTKERNEL_PLUGIN_NAME || 'streamer';
const p = new Plugin(name, process.env.EXTKERNEL_PLUGIN_VERSION || '1.0.0');
for (const kv of (process.env.SCRIPT_PROVIDES || '').split(',').filter(Boolean)) {
  const [key, version] = kv.split('@');
  p.provide(key, version);
}

p.streamProvider('count', 'streams the chunks its input asks for', async function* count(input, signal) {
  const { n = 0, size = 0, fail_at: failAt, crash_at: crashAt, notify } = input || {};
  const blob = size ? 'x'.repeat(size) : undefined;
  let finished = false;
  try {
    for (let i = 1; i <= n; i++) {
      if (i === crashAt) {
        process.stderr.write('streamer: crashing as told\n', () => process.exit(3));
        await new Promise(() => {});
      }
      if (i === failAt) throw new ProtocolError(codes.PLUGIN_ERROR, `failed at chunk ${i}`);
      yield blob === undefined ? { i } : blob;
      if (notify) p.notify('sent', { i });
    }
    finished = true;
  } finally {
    if (!finished && signal.aborted) p.notify('closed', { plugin: name });
  }
});

p.provider('plain', 'answers its input, without streaming', async (input) => ({ plain: input }));

p.provider('relay', 'consumes the stream its input names', async (input, signal) => {
  const res = { chunks: [] };
  try {
    for await (const chunk of p.callStream(input.capability, input.method, input.input)) {
      res.chunks.push(chunk);
      if (input.report) p.notify('took', { n: res.chunks.length });
      if (input.take && res.chunks.length === input.take) break;
      if (input.delay_ms) {
        await new Promise((resolve) => {
          const t = setTimeout(resolve, input.delay_ms);
          signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
        });
        if (signal.aborted) break;
      }
    }
  } catch (e) {
    res.error = e instanceof ProtocolError ? { code: e.code, message: e.message } : { code: 0, message: String(e && e.message) };
  }
  return res;
});

if (require.main === module) p.serve();
