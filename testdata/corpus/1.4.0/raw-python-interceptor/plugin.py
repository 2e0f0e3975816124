#!/usr/bin/env python3
# A plugin with no SDK, written against protocol 1.4.0: it answers
# initialize with exactly that version and uses nothing a later one added.
# Frozen: see testdata/corpus/README.md.
import json, sys

VERSION = "1.4.0"

def send(**msg):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n"); sys.stdout.flush()

ready = False
for line in sys.stdin:                       # ends when the host closes stdin
    if not line.strip():
        continue
    try:
        msg = json.loads(line)
    except ValueError:
        send(id=None, error={"code": -32700, "message": "parse error"}); continue
    if not isinstance(msg, dict):
        send(id=None, error={"code": -32600, "message": "not a request"}); continue
    if "id" not in msg or "method" not in msg:
        continue                             # notifications ($/cancel) and responses
    mid, method, params = msg["id"], msg["method"], msg.get("params") or {}
    if method == "initialize":
        ready = True
        # x_corpus_future: a member no protocol version defines; the host ignores it.
        send(id=mid, result={"protocol_version": VERSION, "name": "raw-python-interceptor", "version": "1.0.0",
                             "interceptors": [{"point": "tool.before"}], "x_corpus_future": {"ignored": True},
                             "features": []})  # protocol 1.4: it uses no optional feature
    elif not ready:
        send(id=mid, error={"code": -32002, "message": method + " before initialize"})
    elif method == "intercept" and params.get("point") == "tool.before":
        send(id=mid, result={"decision": "continue"})
    elif method in ("ping", "shutdown"):
        send(id=mid, result={})
    else:
        send(id=mid, error={"code": -32004 if method == "intercept" else -32601, "message": "unknown " + method})
