#!/usr/bin/env python3
"""The escape suite's hostile plugin in Python, on the Python SDK: the
attempts of main.go (its package comment) a Python author would write,
each answering "ok" and what it got, or the error's text. The suite
(sidecar/escape_polyglot_linux_test.go) copies it and sdk/python/extkernel.py
into a package and runs it confined."""

import os
import socket
import subprocess

import extkernel

p = extkernel.Plugin(os.environ.get("EXTKERNEL_PLUGIN_NAME", "escape-py"),
                     os.environ.get("EXTKERNEL_PLUGIN_VERSION", "1.0.0"))


def attempt(ref, description):
    """Registers fn(a) as provider ref, answering its outcome."""
    def register(fn):
        def handler(input, cancel):
            try:
                got = fn(input or {})
            except Exception as e:  # the denial is the answer
                return str(e)
            return "ok: %s" % got if got else "ok"
        p.provider(ref, description, handler)
        return fn
    return register


@attempt("steal-ssh-key", "reads ~/.ssh/id_ed25519")
def steal_ssh_key(a):
    with open(os.path.expanduser("~/.ssh/id_ed25519")) as f:
        return f.read()


@attempt("read", "reads path")
def read(a):
    with open(a["path"]) as f:
        return f.read()


@attempt("dial-tcp", "connects to addr and writes to it")
def dial_tcp(a):
    host, port = a["addr"].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=2) as s:
        s.sendall(b"escaped")
    return "connected to " + a["addr"]


@attempt("exec", "runs path with args")
def run(a):
    out = subprocess.run([a["path"]] + a.get("args", []), capture_output=True, text=True, check=True)
    return out.stdout.strip()


if __name__ == "__main__":
    p.serve()
