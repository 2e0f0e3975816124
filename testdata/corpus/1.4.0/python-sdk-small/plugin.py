#!/usr/bin/env python3
"""A small plugin written with the Python SDK of protocol 1.4.0 (extkernel.py
beside it is that SDK, as it was). Frozen: see testdata/corpus/README.md."""

import extkernel

p = extkernel.Plugin("python-sdk-small", "1.0.0")


@p.intercept("tool.after")
def after(point, payload, cancel):
    return extkernel.continue_()


@p.provider("upper", "upper-cases a string")
def upper(input, cancel):
    if not isinstance(input, str):
        raise extkernel.ProtocolError(extkernel.INVALID_PARAMS, "input must be a string")
    if p.host_supports(extkernel.FEATURE_PROGRESS):  # protocol 1.4: a flag, not a version
        extkernel.progress("upper-casing")
    return input.upper()


if __name__ == "__main__":
    p.serve()
