#!/usr/bin/env python3
"""An example of streams (protocol 1.1) with the Python SDK: a streaming
provider, and a provider that consumes a capability's stream through the
host. Its manifest would require text.generate, which another package
provides with a streaming method "tokens" (docs/protocol.md section 5.12).
"""

import extkernel

p = extkernel.Plugin("example-stream-python", "1.0.0")


@p.stream_provider("countdown", "streams n, n-1, ..., 1")
def countdown(input, cancel):
    # Each item is one chunk. The generator is not resumed while the
    # host's window is full, and it is closed (GeneratorExit at the yield)
    # when the host cancels. A host that asks for no stream gets the list.
    for i in range(int(input or 0), 0, -1):
        yield i


@p.provider("digest", "joins the tokens text.generate streams")
def digest(input, cancel):
    # Made from the handler's thread: the call's parent is this request.
    # Leaving the with block early would cancel the call.
    with p.call_stream("text.generate", "tokens", input) as tokens:
        return "".join(tokens)


if __name__ == "__main__":
    p.serve()
