#!/usr/bin/env node
// A plugin with no SDK, written against protocol 1.4.0: it answers
// initialize with exactly that version and uses nothing a later one added.
// Frozen: see testdata/corpus/README.md.
"use strict";
const readline = require("readline");

const VERSION = "1.4.0";
const send = (msg) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");

let ready = false;
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
    // x_corpus_future: a member no protocol version defines; the host ignores it.
    send({ id: msg.id, result: { protocol_version: VERSION, name: "raw-node-interceptor", version: "1.0.0",
      interceptors: [{ point: "tool.before" }], x_corpus_future: { ignored: true },
      features: [] } }); // protocol 1.4: it uses no optional feature
  } else if (!ready) {
    send({ id: msg.id, error: { code: -32002, message: msg.method + " before initialize" } });
  } else if (msg.method === "intercept" && params.point === "tool.before") {
    send({ id: msg.id, result: { decision: "continue" } });
  } else if (msg.method === "ping" || msg.method === "shutdown") {
    send({ id: msg.id, result: {} });
  } else {
    send({ id: msg.id, error: { code: msg.method === "intercept" ? -32004 : -32601, message: "unknown " + msg.method } });
  }
});
rl.on("close", () => process.exit(0));
