package admin_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/extkernel/extkernel/admin"
)

// reply is what a raw request got back.
type reply struct {
	status   int
	allow    string // the Allow header
	location string // the Location header, which no answer has
	code     string // the JSON error's code; "" for a success or no body
	message  string // the JSON error's message
}

// rawRequest writes one request line as is on a new connection (no client
// cleans or escapes target) and reads the answer.
func (f *fixture) rawRequest(t *testing.T, method, target, body string) reply {
	t.Helper()
	conn, err := net.Dial("unix", f.ln.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(waitLimit))
	req := method + " " + target + " HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n"
	if body != "" {
		req += "Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"+body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, target, err)
	}
	rp := reply{status: resp.StatusCode, allow: resp.Header.Get("Allow"), location: resp.Header.Get("Location")}
	var e struct{ Error *admin.Error }
	if resp.StatusCode >= 300 && len(data) > 0 {
		if err := json.Unmarshal(data, &e); err != nil || e.Error == nil {
			t.Fatalf("%s %s: HTTP %d answer is no JSON error (%v):\n%s", method, target, resp.StatusCode, err, data)
		}
		rp.code, rp.message = e.Error.Code, e.Error.Message
	}
	return rp
}

// TestRoutes: every endpoint answers its method and refuses every other
// one (HEAD included) with 405, an Allow header and a JSON error.
func TestRoutes(t *testing.T) {
	f := start(t, admin.Options{})
	routes := []struct {
		method, path string
		body         string
		want         reply // of the allowed method
	}{
		{method: "GET", path: "/v1/version", want: reply{status: 200}},
		{method: "GET", path: "/v1/status", want: reply{status: 200}},
		{method: "GET", path: "/v1/plugins", want: reply{status: 200}},
		{method: "GET", path: "/v1/plan", want: reply{status: 200}},
		{method: "GET", path: "/v1/contributions", want: reply{status: 200}},
		{method: "POST", path: "/v1/reload", want: reply{status: 200}},
		{method: "POST", path: "/v1/plugins/memory/restart", want: reply{status: 200}},
		{method: "POST", path: "/v1/plugins/nosuch/restart", want: reply{status: 404, code: admin.CodeUnknownPlugin,
			message: `kernel: restart "nosuch": unknown plugin`}},
		{method: "POST", path: "/v1/call", body: `{"kind": "provider", "target": "plugin/kvstore/get", "input": "k"}`, want: reply{status: 200}},
		{method: "POST", path: "/v1/stop", want: reply{status: 501, code: admin.CodeNotSupported,
			message: "this host does not stop through the admin API (no Options.OnStop)"}},
		{method: "GET", path: "/v1/logs", want: reply{status: 200}},
		{method: "GET", path: "/v1/events", want: reply{status: 200}},
	}
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "get"}
	for _, rt := range routes {
		for _, m := range methods {
			t.Run(m+" "+rt.path, func(t *testing.T) {
				want := rt.want
				if m != rt.method {
					want = reply{status: 405, allow: rt.method, code: admin.CodeMethodNotAllowed,
						message: m + " " + rt.path + " is not allowed: use " + rt.method}
					if m == "HEAD" { // no body
						want.code, want.message = "", ""
					}
				}
				body := ""
				if m == rt.method {
					body = rt.body
				}
				if got := f.rawRequest(t, m, rt.path, body); got != want {
					t.Errorf("got %+v, want %+v", got, want)
				}
			})
		}
	}
}

// TestOddPaths: paths that are not clean, differ in case or slashes, or
// leave a parameter empty get the JSON not_found answer, never a redirect;
// routing reads the decoded path.
func TestOddPaths(t *testing.T) {
	f := start(t, admin.Options{})
	notFound := func(path string) reply {
		return reply{status: 404, code: admin.CodeNotFound, message: "no endpoint " + path + " (docs/admin.md lists them)"}
	}
	tests := []struct {
		name           string
		method, target string
		want           reply
	}{
		{name: "trailing-slash", method: "GET", target: "/v1/status/", want: notFound("/v1/status/")},
		{name: "double-slash-first", method: "GET", target: "//v1/status", want: notFound("//v1/status")},
		{name: "double-slash-inside", method: "GET", target: "/v1//status", want: notFound("/v1//status")},
		{name: "empty-name", method: "POST", target: "/v1/plugins//restart", want: notFound("/v1/plugins//restart")},
		{name: "no-name", method: "POST", target: "/v1/plugins/restart", want: notFound("/v1/plugins/restart")},
		{name: "restart-trailing-slash", method: "POST", target: "/v1/plugins/memory/restart/", want: notFound("/v1/plugins/memory/restart/")},
		{name: "dot-dot", method: "GET", target: "/v1/../v1/status", want: notFound("/v1/../v1/status")},
		{name: "dot", method: "GET", target: "/v1/./status", want: notFound("/v1/./status")},
		{name: "trailing-dot", method: "GET", target: "/v1/status/.", want: notFound("/v1/status/.")},
		{name: "upper-case", method: "GET", target: "/V1/status", want: notFound("/V1/status")},
		{name: "root", method: "GET", target: "/", want: notFound("/")},
		{name: "no-version", method: "GET", target: "/status", want: notFound("/status")},
		{name: "asterisk", method: "GET", target: "*", want: notFound("*")},
		{name: "connect-authority", method: "CONNECT", target: "admin:80", want: notFound("")},
		{name: "connect-path", method: "CONNECT", target: "/v1/status", want: reply{status: 405, allow: "GET",
			code: admin.CodeMethodNotAllowed, message: "CONNECT /v1/status is not allowed: use GET"}},
		// net/http's server answers OPTIONS * itself, before any handler.
		{name: "options-asterisk", method: "OPTIONS", target: "*", want: reply{status: 200}},
		{name: "query-kept", method: "GET", target: "/v1/status?x=1", want: reply{status: 200}},
		{name: "double-slash-query", method: "GET", target: "//v1/status?x=1", want: notFound("//v1/status")},
		// Routing reads the decoded path: an escaped slash separates
		// segments, so a name never holds one.
		{name: "escaped-letter", method: "GET", target: "/v1/st%61tus", want: reply{status: 200}},
		{name: "escaped-slash", method: "GET", target: "/v1%2Fstatus", want: reply{status: 200}},
		{name: "escaped-slash-in-name", method: "POST", target: "/v1/plugins/a%2Fb/restart", want: notFound("/v1/plugins/a/b/restart")},
		{name: "escaped-dot-dot", method: "GET", target: "/v1/%2E%2E/v1/status", want: notFound("/v1/../v1/status")},
		// A "." or ".." segment makes the path unclean, so not even the
		// name of the restart endpoint may be one (nor is it a plugin name:
		// docs/manifest.schema.json).
		{name: "dot-name", method: "POST", target: "/v1/plugins/./restart", want: notFound("/v1/plugins/./restart")},
		{name: "dot-dot-name", method: "POST", target: "/v1/plugins/../restart", want: notFound("/v1/plugins/../restart")},
		{name: "escaped-dot-name", method: "POST", target: "/v1/plugins/%2E/restart", want: notFound("/v1/plugins/./restart")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.rawRequest(t, tt.method, tt.target, ""); got != tt.want {
				t.Errorf("%s %s: got %+v, want %+v", tt.method, tt.target, got, tt.want)
			}
		})
	}
}
