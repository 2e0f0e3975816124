#!/usr/bin/env node
'use strict';
// A small plugin written with the Node.js SDK of protocol 1.4.0 (extkernel.js
// beside it is that SDK, as it was). Frozen: see testdata/corpus/README.md.

const { Plugin, ProtocolError, Continue, codes, features, progress } = require('./extkernel');

const p = new Plugin('node-sdk-small', '1.0.0');

p.intercept('tool.after', async () => Continue());

p.provider('upper', 'upper-cases a string', async (input) => {
  if (typeof input !== 'string') throw new ProtocolError(codes.INVALID_PARAMS, 'input must be a string');
  if (p.hostSupports(features.PROGRESS)) progress('upper-casing'); // protocol 1.4: a flag, not a version
  return input.toUpperCase();
});

p.serve();
