#!/usr/bin/env python3
"""The streams test plugin (testdata/plugins/streamer/main.go describes
it), written with the Python SDK."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # extkernel.py copied beside it

import extkernel  # noqa: E402

name = os.environ.get("EXTKERNEL_PLUGIN_NAME", "streamer")
p = extkernel.Plugin(name, os.environ.get("EXTKERNEL_PLUGIN_VERSION", "1.0.0"))
for kv in filter(None, os.environ.get("SCRIPT_PROVIDES", "").split(",")):
    key, _, version = kv.partition("@")
    p.provide(key, version)


@p.stream_provider("count", "streams the chunks its input asks for")
def count(input, cancel):
    input = input or {}
    size = input.get("size", 0)
    blob = "x" * size if size else None
    finished = False
    try:
        for i in range(1, input.get("n", 0) + 1):
            if i == input.get("crash_at"):
                sys.stderr.write("streamer: crashing as told\n")
                sys.stderr.flush()
                os._exit(3)
            if i == input.get("fail_at"):
                raise extkernel.ProtocolError(extkernel.PLUGIN_ERROR, "failed at chunk %d" % i)
            yield blob if blob is not None else {"i": i}
            if input.get("notify"):
                p.notify("sent", {"i": i})
        finished = True
    finally:
        if not finished and cancel.is_set():
            p.notify("closed", {"plugin": name})


@p.provider("plain", "answers its input, without streaming")
def plain(input, cancel):
    return {"plain": input}


@p.provider("relay", "consumes the stream its input names")
def relay(input, cancel):
    res = {"chunks": []}
    take, delay = input.get("take"), input.get("delay_ms")
    try:
        with p.call_stream(input["capability"], input["method"], input.get("input")) as stream:
            for chunk in stream:
                res["chunks"].append(chunk)
                if input.get("report"):
                    p.notify("took", {"n": len(res["chunks"])})
                if take and len(res["chunks"]) == take:
                    break
                if delay and cancel.wait(delay / 1000):
                    break
    except extkernel.ProtocolError as e:
        res["error"] = {"code": e.code, "message": e.message}
    except (extkernel.CallRefused, TimeoutError) as e:
        res["error"] = {"code": 0, "message": str(e)}
    return res


if __name__ == "__main__":
    p.serve()
