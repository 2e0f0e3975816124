#!/usr/bin/env node
// A plugin with no SDK, written against protocol 1.4.0: it answers
// initialize with exactly that version and uses nothing a later one added.
// Protocol 1.4: it reads the features the host announces and announces its
// own ("progress"), and reports progress only to a host that serves it.
// Frozen: see testdata/corpus/README.md.
"use strict";
const readline = require("readline");

const VERSION = "1.4.0";
const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");

let ready = false;
let hostFeatures = []; // protocol 1.4: what the host announced
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    send({ id: null, error: { code: -32700, message: "parse error" } });
    return;
  }
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
    send({ id: null, error: { code: -32600, message: "not a request" } });
    return;
  }
  if (!("id" in msg) || !("method" in msg)) return; // notifications ($/cancel), responses
  const params = msg.params || {};
  if (msg.method === "initialize") {
    ready = true;
    hostFeatures = Array.isArray(params.features) ? params.features : [];
    // x_corpus_future: a member no protocol version defines; the host ignores it.
    send({ id: msg.id, result: { protocol_version: VERSION, name: "raw-node-provider", version: "1.0.0",
      providers: [{ ref: "echo", description: "returns its input" }], x_corpus_future: { ignored: true },
      features: ["progress"] } });
  } else if (!ready) {
    send({ id: msg.id, error: { code: -32002, message: msg.method + " before initialize" } });
  } else if (msg.method === "provider/invoke" && params.ref === "echo") {
    if (hostFeatures.includes("progress")) { // protocol 1.4: a flag, not a version
      send({ method: "$/progress", params: { id: msg.id, message: "echoing", fraction: 0.5 } });
    }
    send({ id: msg.id, result: { output: params.input === undefined ? null : params.input } });
  } else if (msg.method === "ping" || msg.method === "shutdown") {
    send({ id: msg.id, result: {} });
  } else {
    send({ id: msg.id, error: { code: msg.method === "provider/invoke" ? -32004 : -32601, message: "unknown " + msg.method } });
  }
});
rl.on("close", () => process.exit(0));
