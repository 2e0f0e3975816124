#!/usr/bin/env python3
"""The caller plugin of the SDK's call tests (sdk/caller_test.go describes
it), written with the Python SDK."""

import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import extkernel  # noqa: E402

p = extkernel.Plugin("caller", "1.0.0")


def relay(input):
    timeout = input.get("timeout_ms")
    try:
        out = p.call(input["capability"], input["method"], input.get("input"),
                     timeout=timeout / 1000 if timeout else None)
    except extkernel.CallRefused as e:
        return {"refused": str(e)}
    except TimeoutError:
        return {"timeout": True}
    except extkernel.ProtocolError as e:
        return {"code": e.code, "message": e.message}
    return {"got": out}


@p.provider("relay", "calls the capability method its input names")
def relay_provider(input, cancel):
    return relay(input)


@p.provider("background", "makes the same call outside any handler")
def background(input, cancel):
    threading.Thread(target=lambda: p.notify("background", relay(input)), daemon=True).start()
    return "started"


# late's calls are held before their write until their parent request was
# answered (the host cancels it meanwhile), as a thread past the SDK's
# cancel check is when the host's $/cancel comes.
_late = threading.local()


def _hold_late_call(parent):
    if parent is None or not getattr(_late, "on", False):
        return
    deadline = time.monotonic() + 10
    while not parent.answered and time.monotonic() < deadline:
        time.sleep(0.001)


extkernel._before_call_write = _hold_late_call


@p.provider("late", "makes the call once its request was answered (held until then)")
def late(input, cancel):
    _late.on = True
    try:
        p.notify("late", relay(input))
    finally:
        _late.on = False
    return "done"


@p.provider("echo", "answers its input")
def echo(input, cancel):
    return input


if __name__ == "__main__":
    p.serve()
