package sidecar

import (
	"bytes"
)

// maxTracedFrame is how much of a frame a trace line shows, in bytes; the
// line gives the frame's whole size.
const maxTracedFrame = 2 << 10

// traceFrame logs one frame at trace level (dir "send" or "recv"), through
// the redaction point every plugin string passes (redactor): the whole
// frame is redacted before it is cut to maxTracedFrame, so a secret is
// never shown in part. The frames the plugin sends pass a limiter of
// their own (frameLimit), with the limits of its log lines, whose summary
// is logged under the name "frames": they do not take its log lines'
// share. Callers check c.tracing first.
func (c *Client) traceFrame(dir string, frame []byte) {
	if dir == "recv" && !c.frameLimit.allow() {
		return
	}
	text := c.redact.text(string(bytes.TrimRight(frame, "\r\n")))
	c.log.Trace("frame", "dir", dir, "bytes", len(frame), "frame", cutText(text, maxTracedFrame))
}

// redactArgs returns argv with each argument redacted, for the spawn line.
func (c *Client) redactArgs(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = c.redact.text(a)
	}
	return out
}
