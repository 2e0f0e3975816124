package hostcap

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extkernel/extkernel/kernel/observe"
)

// fetchServer serves /v1/hello, /v1/bin, /v1/big, /v1/slow (until the
// request ends), /v1/to-v1 and /v1/to-admin (redirects), /v1/loop (a
// redirect to itself) and /admin.
func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Etag", `"abc"`)
		w.Header().Set("X-Secret", "not answered")
		w.Write([]byte("hello"))
	})
	mux.HandleFunc("/v1/bin", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte{0xff, 0, 1}) })
	mux.HandleFunc("/v1/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 2000))) })
	mux.HandleFunc("/v1/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/v1/missing", http.NotFound)
	mux.HandleFunc("/v1/to-v1", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/v1/hello", http.StatusFound) })
	mux.HandleFunc("/v1/to-admin", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/admin", http.StatusFound) })
	mux.HandleFunc("/v1/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/v1/loop", http.StatusFound) })
	mux.HandleFunc("/admin", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("admin")) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestNetFetch holds what host.net.fetch fetches and refuses, and what it
// audits, for URLs inside and outside its allowlist, redirects and bounds.
func TestNetFetch(t *testing.T) {
	srv := fetchServer(t)
	u := srv.URL
	h, err := NewNetFetch(NetFetchConfig{Allow: []string{u + "/v1"}, MaxBytes: 1000, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, url string
		want      string // status, final URL, headers and content, or the reason and message
	}{
		{"allowed", u + "/v1/hello", `200 ` + u + `/v1/hello {"Content-Length":"5","Content-Type":"text/plain","Etag":"\"abc\""} utf-8 hello`},
		{"binary", u + "/v1/bin", `200 ` + u + `/v1/bin {"Content-Length":"3","Content-Type":"application/octet-stream"} base64 /wAB`},
		{"a status", u + "/v1/missing", `404 ` + u + `/v1/missing`},
		{"a fragment", u + "/v1/hello#x", `200 ` + u + `/v1/hello `},
		{"a redirect inside", u + "/v1/to-v1", `200 ` + u + `/v1/hello `},
		{"a redirect outside", u + "/v1/to-admin", `denied: host.net.fetch: denied: ` + u + `/v1/to-admin: redirect to ` + u + `/admin: not in the host's allowlist`},
		{"a redirect loop", u + "/v1/loop", `denied: host.net.fetch: denied: ` + u + `/v1/loop: redirect to ` + u + `/v1/loop: more than 10 redirects`},
		{"another path", u + "/admin", `denied: host.net.fetch: denied: ` + u + `/admin: not in the host's allowlist (allowed: ` + u + `/v1)`},
		{"a longer segment", u + "/v10", `denied: host.net.fetch: denied: ` + u + `/v10: not in the host's allowlist`},
		{"dot-dot", u + "/v1/../admin", `denied: host.net.fetch: denied: ` + u + `/v1/../admin: a path with a "." or ".." segment is refused`},
		{"escaped dot-dot", u + "/v1/%2e%2e/admin", `denied: host.net.fetch: denied: ` + u + `/v1/%2e%2e/admin: a path with a "." or ".." segment is refused`},
		{"another port", "http://127.0.0.1:1/v1/hello", `denied: host.net.fetch: denied: http://127.0.0.1:1/v1/hello: not in the host's allowlist`},
		{"another scheme", "file:///etc/passwd", `denied: host.net.fetch: denied: file:///etc/passwd: not an http or https URL`},
		{"a user", strings.Replace(u, "//", "//me:pw@", 1) + "/v1/hello", `denied: host.net.fetch: denied: http://me:xxxxx@`},
		{"relative", "/v1/hello", `denied: host.net.fetch: denied: "/v1/hello" is not an absolute URL`},
		{"too large", u + "/v1/big", `too_large: host.net.fetch: ` + u + `/v1/big: the body is more than the 1000 bytes the host serves`},
		{"too slow", u + "/v1/slow", `failed: host.net.fetch: ` + u + `/v1/slow: no answer in time (the host's timeout is 300ms`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := json.Marshal(map[string]string{"url": tt.url})
			o := call(t, h, NetFetch, "get", string(in))
			got := ""
			if o.err != nil {
				got = o.reason() + ": " + o.err.Message
			} else {
				var f fetched
				if err := json.Unmarshal(o.out, &f); err != nil {
					t.Fatal(err)
				}
				delete(f.Headers, "Date")
				hdr, _ := json.Marshal(f.Headers)
				got = strings.Join([]string{strconv.Itoa(f.Status), f.URL, string(hdr), f.Encoding, f.Content}, " ")
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			wantState := observe.AuditAllowed
			switch o.reason() {
			case "denied":
				wantState = observe.AuditDenied
			case "":
			default:
				wantState = observe.AuditFailed
			}
			if o.state() != wantState || o.audits[0].Target != tt.url {
				t.Errorf("audits = %+v, want one %s of %s", o.audits, wantState, tt.url)
			}
		})
	}
}

// TestNetFetchInputAndConfig: another method and bad input are refused
// without an audit; every problem of a config is reported at once; the
// kernel.json form decodes, timeout as a duration.
func TestNetFetchInputAndConfig(t *testing.T) {
	h, err := NewNetFetch(NetFetchConfig{Allow: []string{"https://example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ method, input, want string }{
		{"post", `{"url":"https://example.com"}`, `host.net.fetch has no method "post" (it has: get) (code -32601)`},
		{"get", `{}`, `host.net.fetch.get: input must be {"url": string} (code -32602)`},
	} {
		o := call(t, h, NetFetch, tt.method, tt.input)
		if o.err == nil || o.err.Error() != tt.want || len(o.audits) != 0 {
			t.Errorf("%s %s: %v, audits %v; want %s and none", tt.method, tt.input, o.err, o.audits, tt.want)
		}
	}
	_, err = NewNetFetch(NetFetchConfig{Allow: []string{"ftp://x", "https://", "https://a/?q=1", "https://a/x/../y", "https://u@a"}, MaxBytes: -1, Timeout: -time.Second})
	want := `host.net.fetch: allow[0]: "ftp://x": must be an http or https URL; allow[1]: "https://": must name a host; ` +
		`allow[2]: "https://a/?q=1": must not have a user, a query or a fragment; allow[3]: "https://a/x/../y": must not have a "." or ".." path segment; ` +
		`allow[4]: "https://u@a": must not have a user, a query or a fragment; max_bytes: -1 must be in 1..2097152; timeout: -1s must be positive`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	if _, err := NewNetFetch(NetFetchConfig{}); err == nil || err.Error() != "host.net.fetch: allow: at least one URL prefix is required" {
		t.Errorf("no allow: %v", err)
	}
	var c NetFetchConfig
	if err := json.Unmarshal([]byte(`{"allow": ["https://a"], "max_bytes": 5, "timeout": "2s"}`), &c); err != nil ||
		c.Allow[0] != "https://a" || c.MaxBytes != 5 || c.Timeout != 2*time.Second {
		t.Errorf("decode: %+v, %v", c, err)
	}
	for in, want := range map[string]string{
		`{"timeout": "soon"}`: `timeout: "soon" is not a duration (such as "5s")`,
		`{"allowed": []}`:     `unknown field "allowed"`,
	} {
		if err := json.Unmarshal([]byte(in), &c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", in, err, want)
		}
	}
}
