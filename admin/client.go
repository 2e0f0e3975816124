package admin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/internal/homefile"
)

// Client limits.
const (
	// maxAnswer bounds an answer the client reads, in bytes.
	maxAnswer = 16 << 20
	// maxStreamLine bounds one line of a stream, in bytes: an event line
	// carries a notify's data, up to 4 MiB as the plugin sent it (more
	// once redaction escaped it again).
	maxStreamLine = 16 << 20
	// dialTimeout bounds connecting to the socket.
	dialTimeout = 5 * time.Second
)

// NoServerError is returned by Dial when nothing serves the socket: there
// is no socket (Stale false), or one that nobody answers (Stale true).
type NoServerError struct {
	Path  string
	Stale bool
	Err   error
}

// Error says which: "no admin socket at /h/run/admin.sock", or "stale admin
// socket at /h/run/admin.sock: nothing answers it".
func (e *NoServerError) Error() string {
	if e.Stale {
		return fmt.Sprintf("stale admin socket at %s: nothing answers it", e.Path)
	}
	return fmt.Sprintf("no admin socket at %s", e.Path)
}

// Unwrap returns the dial's error.
func (e *NoServerError) Unwrap() error { return e.Err }

// Client calls an admin server over its Unix socket. Its methods are safe
// for concurrent use. Each bounds what it reads; each honours its ctx,
// which is how a caller bounds a call (a follow stream runs until ctx is
// done, the server ends it, or the callback fails).
type Client struct {
	path string
	http *http.Client
}

// Dial returns a client of the server listening on the socket path, after
// checking that something answers there: when nothing does, it returns a
// *NoServerError.
func Dial(path string) (*Client, error) {
	c, err := net.DialTimeout("unix", path, dialTimeout)
	if err != nil {
		_, statErr := os.Lstat(path)
		return nil, &NoServerError{Path: path, Stale: !errors.Is(statErr, fs.ErrNotExist), Err: err}
	}
	c.Close()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{path: path, http: &http.Client{Transport: tr}}, nil
}

// Close closes the client's idle connections. It is idempotent.
func (c *Client) Close() error {
	c.http.CloseIdleConnections()
	return nil
}

// Version asks GET /v1/version.
func (c *Client) Version(ctx context.Context) (*VersionAnswer, error) {
	var a VersionAnswer
	return &a, c.do(ctx, http.MethodGet, "/v1/version", nil, &a)
}

// Status asks GET /v1/status.
func (c *Client) Status(ctx context.Context) (*StatusAnswer, error) {
	var a StatusAnswer
	return &a, c.do(ctx, http.MethodGet, "/v1/status", nil, &a)
}

// Plugins asks GET /v1/plugins.
func (c *Client) Plugins(ctx context.Context) (*PluginsAnswer, error) {
	var a PluginsAnswer
	return &a, c.do(ctx, http.MethodGet, "/v1/plugins", nil, &a)
}

// Contributions asks GET /v1/contributions; a non-empty plugin selects
// that plugin's.
func (c *Client) Contributions(ctx context.Context, plugin string) (*ContributionsAnswer, error) {
	var a ContributionsAnswer
	path := "/v1/contributions"
	if plugin != "" {
		path += "?plugin=" + url.QueryEscape(plugin)
	}
	return &a, c.do(ctx, http.MethodGet, path, nil, &a)
}

// Plan asks GET /v1/plan.
func (c *Client) Plan(ctx context.Context) (*generation.Plan, error) {
	var a generation.Plan
	return &a, c.do(ctx, http.MethodGet, "/v1/plan", nil, &a)
}

// Reload asks POST /v1/reload. A rollback is an *Error with code
// CodeReloadRolledBack listing every problem.
func (c *Client) Reload(ctx context.Context) (*ReloadAnswer, error) {
	var a ReloadAnswer
	return &a, c.do(ctx, http.MethodPost, "/v1/reload", nil, &a)
}

// Restart asks POST /v1/plugins/{plugin}/restart.
func (c *Client) Restart(ctx context.Context, plugin string) (*RestartAnswer, error) {
	var a RestartAnswer
	return &a, c.do(ctx, http.MethodPost, "/v1/plugins/"+url.PathEscape(plugin)+"/restart", nil, &a)
}

// Stop asks POST /v1/stop. The answer names the process that is
// stopping; the kernel is stopped once that process has exited. A host
// that does not stop through the API answers an *Error with code
// CodeNotSupported.
func (c *Client) Stop(ctx context.Context) (*StopAnswer, error) {
	var a StopAnswer
	return &a, c.do(ctx, http.MethodPost, "/v1/stop", nil, &a)
}

// Call asks POST /v1/call. A plugin's failure is an *Error with code
// CodePluginError carrying the plugin's message.
func (c *Client) Call(ctx context.Context, req CallRequest) (*CallAnswer, error) {
	var a CallAnswer
	return &a, c.do(ctx, http.MethodPost, "/v1/call", req, &a)
}

// LogsRequest is what GET /v1/logs selects; Level and Since are sent as
// given (docs/admin.md: a level name; a duration such as 5m or an RFC 3339
// time).
type LogsRequest struct {
	Plugin string
	Level  string
	Since  string
	Follow bool
}

// Logs streams GET /v1/logs, calling fn with each line until the stream
// ends (without Follow, after the kept lines), ctx is done, or fn returns
// an error, which Logs returns. A stream the server ends early (the client
// fell behind) ends with an *Error.
func (c *Client) Logs(ctx context.Context, req LogsRequest, fn func(LogLine) error) error {
	q := url.Values{}
	for k, v := range map[string]string{"plugin": req.Plugin, "level": req.Level, "since": req.Since} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if req.Follow {
		q.Set("follow", "true")
	}
	return stream(ctx, c, "/v1/logs?"+q.Encode(), fn)
}

// EventsRequest is what GET /v1/events selects: events of any of Plugins
// (none: every event, the kernel's own included) and of any of Types
// (observe.EventType names; none: every type).
type EventsRequest struct {
	Plugins []string
	Types   []string
	Follow  bool
}

// Events streams GET /v1/events as Logs streams logs.
func (c *Client) Events(ctx context.Context, req EventsRequest, fn func(EventLine) error) error {
	q := url.Values{}
	for _, p := range req.Plugins {
		q.Add("plugin", p)
	}
	for _, t := range req.Types {
		q.Add("type", t)
	}
	if req.Follow {
		q.Set("follow", "true")
	}
	path := "/v1/events"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return stream(ctx, c, path, fn)
}

// do sends one request (body encoded as JSON unless nil) and decodes the
// answer into out, or returns the *Error answer.
func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("admin: %s %s: reading the answer: %w", method, path, err)
	}
	if len(data) > maxAnswer {
		return fmt.Errorf("admin: %s %s: the answer is larger than %s", method, path, homefile.Size(maxAnswer))
	}
	if resp.StatusCode != http.StatusOK {
		return answerError(method, path, resp.StatusCode, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("admin: %s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

func (c *Client) send(ctx context.Context, method, path string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("admin: %s %s: encoding the request: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://admin"+path, rd)
	if err != nil {
		return nil, fmt.Errorf("admin: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin: %s %s via %s: %w", method, path, c.path, err)
	}
	return resp, nil
}

// answerError decodes an error answer, or describes one that is not.
func answerError(method, path string, status int, data []byte) error {
	var body errorBody
	if json.Unmarshal(data, &body) == nil && body.Error != nil {
		body.Error.Status = status
		return body.Error
	}
	return fmt.Errorf("admin: %s %s: HTTP %d: %.200s", method, path, status, data)
}

// stream reads an NDJSON stream, one T per line.
func stream[T any](ctx context.Context, c *Client, path string, fn func(T) error) error {
	resp, err := c.send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
		return answerError(http.MethodGet, path, resp.StatusCode, data)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxStreamLine)
	for sc.Scan() {
		var end errorBody
		if json.Unmarshal(sc.Bytes(), &end) == nil && end.Error != nil {
			end.Error.Status = resp.StatusCode
			return end.Error
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fmt.Errorf("admin: GET %s: decoding a line: %w", path, err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("admin: GET %s: %w", path, err)
	}
	return ctx.Err()
}
