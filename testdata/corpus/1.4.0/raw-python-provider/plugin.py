#!/usr/bin/env python3
# A plugin with no SDK, written against protocol 1.4.0: it answers
# initialize with exactly that version and uses nothing a later one added.
# Protocol 1.4: it reads the features the host announces and announces its
# own ("progress"), and reports progress only to a host that serves it.
# Frozen: see testdata/corpus/README.md.
import json, sys

VERSION = "1.4.0"

def send(**msg):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **msg}) + "\n"); sys.stdout.flush()

ready = False
host_features = []
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
        host_features = params.get("features") or []
        # x_corpus_future: a member no protocol version defines; the host ignores it.
        send(id=mid, result={"protocol_version": VERSION, "name": "raw-python-provider", "version": "1.0.0",
                             "providers": [{"ref": "echo", "description": "returns its input"}], "x_corpus_future": {"ignored": True},
                             "features": ["progress"]})
    elif not ready:
        send(id=mid, error={"code": -32002, "message": method + " before initialize"})
    elif method == "provider/invoke" and params.get("ref") == "echo":
        if "progress" in host_features:  # protocol 1.4: a flag, not a version
            send(method="$/progress", params={"id": mid, "message": "echoing", "fraction": 0.5})
        send(id=mid, result={"output": params.get("input")})
    elif method in ("ping", "shutdown"):
        send(id=mid, result={})
    else:
        send(id=mid, error={"code": -32004 if method == "provider/invoke" else -32601, "message": "unknown " + method})
