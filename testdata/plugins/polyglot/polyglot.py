#!/usr/bin/env python3
"""The Python one of the polyglot test plugins, on the Python SDK (its
extkernel.py is copied next to it): main.go describes the script its
provider "run" acts on; this one has no "loop"."""

import os
import time

import extkernel

LANG = "python"
NAME = os.environ["EXTKERNEL_PLUGIN_NAME"]

p = extkernel.Plugin(NAME, os.environ["EXTKERNEL_PLUGIN_VERSION"])
for kv in filter(None, os.environ.get("POLYGLOT_PROVIDES", "").split(",")):
    key, _, version = kv.partition("@")
    p.provide(key, version)


def notify(event):
    p.notify(event, {"plugin": NAME, "lang": LANG})


def do_work(ms, every, cancel):
    """Works ms milliseconds (until cancelled when 0), reporting progress
    every every milliseconds (none when 0)."""
    end = time.monotonic() + ms / 1000 if ms else None
    while True:
        now = time.monotonic()
        if end is not None and now >= end:
            return {"worked": LANG}
        wait = every / 1000 if every else None
        if end is not None:
            wait = min(wait, end - now) if wait is not None else end - now
        if cancel.wait(wait):
            raise extkernel.ProtocolError(extkernel.REQUEST_CANCELLED, "polyglot: cancelled")
        if every:
            extkernel.progress("working")


@p.provider("run", "runs its input as a script")
def run(script, cancel):
    if not isinstance(script, dict):
        raise extkernel.ProtocolError(extkernel.INVALID_PARAMS, "polyglot: input is not a script")
    if script.get("notify"):
        notify(script["notify"])
    if script.get("block"):
        cancel.wait()
        notify("cancelled")
        raise extkernel.ProtocolError(extkernel.REQUEST_CANCELLED, "polyglot: cancelled")
    if script.get("read"):
        try:
            with open(script["read"]) as f:
                return {"read": f.read()}
        except OSError as e:
            return {"read_error": "%s: %s" % (type(e).__name__, e)}
    if script.get("features"):
        names = [extkernel.FEATURE_CALLS, extkernel.FEATURE_CANCEL, extkernel.FEATURE_CONTRIBUTIONS,
                 extkernel.FEATURE_PROGRESS, extkernel.FEATURE_STREAMS, extkernel.FEATURE_TRACE, "telepathy"]
        return {"host_features": [f for f in names if p.host_supports(f)], "lang": LANG}
    if script.get("progress"):
        for _ in range(script["progress"]):
            extkernel.progress("step")
        return {"progressed": script["progress"]}
    work = script.get("work")
    if work is not None:
        return do_work(work.get("ms", 0), work.get("every", 0), cancel)
    call = script.get("call")
    if call is not None:
        try:
            # From the handler's thread: the call's parent is this request.
            out = p.call(call["capability"], call["method"], call.get("input"))
        except extkernel.ProtocolError as e:
            return {"error": {"code": e.code, "message": e.message}, "type": type(e).__name__}
        return {"output": out}
    return {"echo": script.get("echo"), "lang": LANG, "plugin": NAME}


if __name__ == "__main__":
    p.serve()
