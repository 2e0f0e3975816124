#!/usr/bin/env python3
"""An example extkernel plugin built with the Python SDK.

It redacts secrets before tools run, echoes provider input, counts words,
has a slow provider that honours cancellation, a provider that recalls notes
through the storage.kv capability it requires (protocol 1.1), a UI action,
and a "tool" (a kind its host declares, protocol 1.1) that upper-cases a
string. Its manifest is plugin.json next to it.
"""

import re
import time

import extkernel

SECRET = re.compile(r"(API_KEY|TOKEN)=\S+")

p = extkernel.Plugin("example-python", "1.0.0")
p.provide("example.redact", "1.0.0")
config = {}


@p.on_initialize
def setup(params):
    config.update(params.get("config") or {})
    p.log.info("initialized", host=params["host"]["name"], data_dir=params["plugin"]["data_dir"])


@p.intercept("tool.before")
def redact(point, payload, cancel):
    command = (payload or {}).get("command", "")
    if "rm -rf /" in command:
        return extkernel.deny("refusing to delete the root directory")
    if SECRET.search(command):
        return extkernel.modify({"command": SECRET.sub(r"\1=[redacted]", command)})
    return extkernel.continue_()


@p.provider("echo", "returns its input")
def echo(input, cancel):
    return input


@p.provider("wordcount", "counts the words of a string")
def wordcount(input, cancel):
    if not isinstance(input, str):
        raise extkernel.ProtocolError(extkernel.INVALID_PARAMS, "input must be a string")
    return len(input.split())


@p.provider("slow", "waits until cancelled (at most 30 s)")
def slow(input, cancel):
    started = time.monotonic()
    if cancel.wait(timeout=30):
        p.log.info("slow call cancelled", after=round(time.monotonic() - started, 3))
        return None
    return "done"


@p.provider("recall", "recalls the note on a topic from storage.kv")
def recall(input, cancel):
    topic = input.get("topic") if isinstance(input, dict) else None
    if not isinstance(topic, str):
        raise extkernel.ProtocolError(extkernel.INVALID_PARAMS, 'input must be {"topic": string}')
    try:
        # Called from the handler's thread: the call's parent is this
        # request, and cancelling the request cancels the call.
        note = p.call("storage.kv", "get", {"key": topic})
    except extkernel.ProtocolError as e:
        if e.code != extkernel.NOT_AVAILABLE:  # the requirement is optional
            raise
        return {"recalled": None, "reason": e.message}
    return {"recalled": note}


@p.contribute("tool", "text.upper", title="Upper-case a text", data={"input": {"type": "string"}})
def upper(input, cancel):
    if not isinstance(input, str):
        raise extkernel.ProtocolError(extkernel.INVALID_PARAMS, "input must be a string")
    return input.upper()


@p.action("hello", "Say hello", "toolbar")
def hello(context, cancel):
    p.notify("greeted", {"who": context})
    return {"greeting": "hello %s" % (context or "world")}


if __name__ == "__main__":
    p.serve()
