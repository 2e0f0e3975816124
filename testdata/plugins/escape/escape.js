#!/usr/bin/env node
'use strict';
// The escape suite's hostile plugin in Node.js, on the Node.js SDK: the
// attempts of main.go (its package comment) a Node.js author would write,
// each answering "ok" and what it got, or the error's text. The suite
// (sidecar/escape_polyglot_linux_test.go) copies it and
// sdk/node/extkernel.js into a package and runs it confined.

const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { Plugin } = require('./extkernel');

const p = new Plugin(process.env.EXTKERNEL_PLUGIN_NAME || 'escape-js', process.env.EXTKERNEL_PLUGIN_VERSION || '1.0.0');

// attempt registers fn(a) as provider ref, answering its outcome.
function attempt(ref, description, fn) {
  p.provider(ref, description, async (input) => {
    try {
      const got = await fn(input || {});
      return got ? `ok: ${got}` : 'ok';
    } catch (e) {
      return String(e.message);
    }
  });
}

attempt('steal-ssh-key', 'reads ~/.ssh/id_ed25519', () => fs.readFileSync(path.join(os.homedir(), '.ssh', 'id_ed25519'), 'utf8'));

attempt('read', 'reads path', (a) => fs.readFileSync(a.path, 'utf8'));

attempt('dial-tcp', 'connects to addr and writes to it', (a) => new Promise((resolve, reject) => {
  const i = a.addr.lastIndexOf(':');
  const s = net.connect({ host: a.addr.slice(0, i), port: Number(a.addr.slice(i + 1)) }, () => {
    s.end('escaped');
    resolve(`connected to ${a.addr}`);
  });
  s.setTimeout(2000, () => s.destroy(new Error('timed out')));
  s.on('error', reject);
}));

attempt('exec', 'runs path with args', (a) => execFileSync(a.path, a.args || [], { encoding: 'utf8' }).trim());

p.serve();
