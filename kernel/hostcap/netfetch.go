package hostcap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/protocol"
)

// NetFetch is the key of the capability NewNetFetch serves.
const NetFetch capability.Key = "host.net.fetch"

// DefaultFetchTimeout bounds a fetch when the config sets no Timeout.
const DefaultFetchTimeout = 10 * time.Second

// maxRedirects bounds the redirects a fetch follows, as net/http's
// default client does.
const maxRedirects = 10

// answeredHeaders are the response headers an answer carries.
var answeredHeaders = []string{"Cache-Control", "Content-Language", "Content-Length", "Content-Type", "Date", "Etag", "Last-Modified"}

// NetFetchConfig is what a host.net.fetch handler may fetch. In
// kernel.json it is the object capability_config["host.net.fetch"], with
// the keys of the json tags (timeout a duration such as "5s"); an unknown
// key is refused.
type NetFetchConfig struct {
	// Allow lists the URLs that may be fetched, each a prefix: an http or
	// https URL without user, query or fragment. A URL is allowed when its
	// scheme, host and port are an entry's (the port defaulting to the
	// scheme's) and its path is the entry's path or beneath it (an entry
	// "https://api.example.com/v1" allows /v1 and /v1/..., not /v10; an
	// entry without a path allows the whole site). At least one entry.
	Allow []string `json:"allow"`
	// MaxBytes bounds the body of a response, in bytes: zero means
	// DefaultMaxBytes, more than MaxMaxBytes is refused. A larger body is
	// refused, not cut.
	MaxBytes int64 `json:"max_bytes"`
	// Timeout bounds a fetch, redirects and body included: zero means
	// DefaultFetchTimeout. The call's own deadline bounds it too.
	Timeout time.Duration `json:"timeout"`
	// Transport makes the requests; nil means a clone of
	// http.DefaultTransport (proxies from the environment). Go only.
	Transport http.RoundTripper `json:"-"`
}

// UnmarshalJSON decodes the config as kernel.json holds it: timeout as a
// duration string, unknown keys refused.
func (c *NetFetchConfig) UnmarshalJSON(b []byte) error {
	var f struct {
		Allow    []string `json:"allow"`
		MaxBytes int64    `json:"max_bytes"`
		Timeout  string   `json:"timeout"`
	}
	if err := decodeStrict(b, &f); err != nil {
		return err
	}
	*c = NetFetchConfig{Allow: f.Allow, MaxBytes: f.MaxBytes}
	if f.Timeout != "" {
		d, err := time.ParseDuration(f.Timeout)
		if err != nil {
			return fmt.Errorf("timeout: %q is not a duration (such as \"5s\")", f.Timeout)
		}
		c.Timeout = d
	}
	return nil
}

// prefix is an allowlist entry, normalized.
type prefix struct {
	scheme, host, port, path string
	text                     string // as configured
}

// NewNetFetch returns the handler of host.net.fetch. Its one method, get,
// takes {"url": string} and answers {"status", "url" (the last one
// fetched), "headers" (Content-Type, Content-Length, Etag, Last-Modified,
// Cache-Control, Content-Language and Date, those the response has),
// "size", "encoding", "content"} for any HTTP status, or refuses: a URL
// outside the allowlist, a redirect leaving it, a body over the size
// bound, the timeout, a failed connection. Every call is audited (package
// doc, "Audit"). The error lists every problem of cfg, each with its key.
func NewNetFetch(cfg NetFetchConfig) (capability.Handler, error) {
	var problems []string
	if len(cfg.Allow) == 0 {
		problems = append(problems, "allow: at least one URL prefix is required")
	}
	var allow []prefix
	for i, a := range cfg.Allow {
		p, err := parsePrefix(a)
		if err != nil {
			problems = append(problems, fmt.Sprintf("allow[%d]: %q: %v", i, a, err))
			continue
		}
		allow = append(allow, p)
	}
	max, msg := maxBytes(cfg.MaxBytes)
	if msg != "" {
		problems = append(problems, msg)
	}
	if cfg.Timeout < 0 {
		problems = append(problems, fmt.Sprintf("timeout: %v must be positive", cfg.Timeout))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s: %s", NetFetch, strings.Join(problems, "; "))
	}
	h := &fetcher{allow: allow, max: max, timeout: cfg.Timeout}
	if h.timeout == 0 {
		h.timeout = DefaultFetchTimeout
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	h.client = &http.Client{Transport: transport, CheckRedirect: h.checkRedirect}
	return h.serve, nil
}

// parsePrefix parses an allowlist entry.
func parsePrefix(s string) (prefix, error) {
	u, err := url.Parse(s)
	if err != nil {
		return prefix{}, errors.Unwrap(err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return prefix{}, errors.New("must be an http or https URL")
	case u.Host == "" || u.Hostname() == "":
		return prefix{}, errors.New("must name a host")
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return prefix{}, errors.New("must not have a user, a query or a fragment")
	case hasDotSegment(u.Path):
		return prefix{}, errors.New(`must not have a "." or ".." path segment`)
	}
	p := normalize(u)
	p.text = s
	return p, nil
}

// normalize returns u's scheme, host and port (defaulted), lower-cased,
// and its path ("/" when empty).
func normalize(u *url.URL) prefix {
	p := prefix{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port(), path: u.Path}
	if p.port == "" {
		p.port = map[string]string{"http": "80", "https": "443"}[p.scheme]
	}
	if p.path == "" {
		p.path = "/"
	}
	return p
}

// hasDotSegment reports whether a path has a "." or ".." segment, which
// a server would resolve out of the prefix it seems to be under.
func hasDotSegment(path string) bool {
	for _, s := range strings.Split(path, "/") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// fetcher serves host.net.fetch.
type fetcher struct {
	allow   []prefix
	max     int64
	timeout time.Duration
	client  *http.Client
}

// allowed returns why u may not be fetched, or "".
func (h *fetcher) allowed(u *url.URL) string {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "not an http or https URL"
	case u.User != nil:
		return "a URL with a user is refused"
	case hasDotSegment(u.Path):
		return `a path with a "." or ".." segment is refused`
	}
	n := normalize(u)
	for _, p := range h.allow {
		if n.scheme != p.scheme || n.host != p.host || n.port != p.port {
			continue
		}
		if n.path == p.path || strings.HasPrefix(n.path, strings.TrimSuffix(p.path, "/")+"/") {
			return ""
		}
	}
	return "not in the host's allowlist"
}

// errRedirect is a redirect the handler refuses to follow.
type errRedirect struct{ to, why string }

func (e *errRedirect) Error() string { return fmt.Sprintf("redirect to %s: %s", e.to, e.why) }

// checkRedirect follows a redirect only within the allowlist.
func (h *fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return &errRedirect{to: req.URL.String(), why: fmt.Sprintf("more than %d redirects", maxRedirects)}
	}
	if why := h.allowed(req.URL); why != "" {
		return &errRedirect{to: req.URL.String(), why: why}
	}
	return nil
}

// getInput is the input of get.
type getInput struct {
	URL *string `json:"url"`
}

// fetched is the answer of get.
type fetched struct {
	Status  int               `json:"status"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	content
}

func (h *fetcher) serve(ctx context.Context, call *capability.Call) (json.RawMessage, error) {
	if call.Method != "get" {
		return nil, noMethod(string(NetFetch), call.Method, "get")
	}
	var in getInput
	if err := json.Unmarshal(call.Input, &in); err != nil || in.URL == nil {
		return nil, badInput(`%s.get: input must be {"url": string}`, NetFetch)
	}
	out, perr := h.get(ctx, *in.URL)
	if perr != nil {
		audit(ctx, *in.URL, "", perr)
		return nil, perr
	}
	audit(ctx, *in.URL, fmt.Sprintf("status %d, %d bytes", out.Status, out.Size), nil)
	return json.Marshal(out)
}

// get fetches raw, or says why not.
func (h *fetcher) get(ctx context.Context, raw string) (*fetched, *protocol.Error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return nil, refusal(string(NetFetch), reasonDenied, "denied: %q is not an absolute URL", raw)
	}
	u.Fragment, u.RawFragment = "", ""
	if why := h.allowed(u); why != "" {
		return nil, refusal(string(NetFetch), reasonDenied, "denied: %s: %s (%s)", u.Redacted(), why, h.allowList())
	}
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, refusal(string(NetFetch), reasonFailed, "%s: %v", u, err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fetchFailure(u, err, h.timeout)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, h.max+1))
	switch {
	case err != nil:
		return nil, fetchFailure(u, err, h.timeout)
	case int64(len(body)) > h.max:
		return nil, refusal(string(NetFetch), reasonTooLarge, "%s: the body is more than the %d bytes the host serves", u, h.max)
	}
	out := &fetched{Status: resp.StatusCode, URL: resp.Request.URL.String(), Headers: map[string]string{}, content: contentOf(body)}
	for _, k := range answeredHeaders {
		if v := resp.Header.Get(k); v != "" {
			out.Headers[k] = v
		}
	}
	return out, nil
}

// allowList lists the allowlist as configured.
func (h *fetcher) allowList() string {
	list := make([]string, len(h.allow))
	for i, p := range h.allow {
		list[i] = p.text
	}
	return "allowed: " + strings.Join(list, ", ")
}

// fetchFailure says why a fetch of u failed: a redirect refused, the
// timeout, or the connection.
func fetchFailure(u *url.URL, err error, timeout time.Duration) *protocol.Error {
	var re *errRedirect
	var ne net.Error
	switch {
	case errors.As(err, &re):
		return refusal(string(NetFetch), reasonDenied, "denied: %s: %v", u, re)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return refusal(string(NetFetch), reasonFailed, "%s: no answer in time (the host's timeout is %v, the call's deadline may be shorter)", u, timeout)
	case errors.Is(err, context.Canceled):
		return refusal(string(NetFetch), reasonFailed, "%s: the call was cancelled", u)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return refusal(string(NetFetch), reasonFailed, "%s: %v", u, err)
}
