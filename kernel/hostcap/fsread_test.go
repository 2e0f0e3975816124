//go:build unix

package hostcap

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/protocol"
)

// fsTree is a root with files, links and a FIFO, and a secret outside it.
type fsTree struct {
	root, link, secret string
}

func newFSTree(t *testing.T) fsTree {
	t.Helper()
	base := t.TempDir()
	tr := fsTree{root: filepath.Join(base, "root"), link: filepath.Join(base, "link"), secret: filepath.Join(base, "secret")}
	for _, d := range []string{tr.root + "/sub", tr.secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		tr.root + "/hello.txt": "hello", tr.root + "/sub/bin": "\xff\x00\x01", tr.root + "/big": strings.Repeat("x", 2000),
		tr.secret + "/key": "secret",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		tr.link:                 tr.root,                // the root through a link
		tr.root + "/inside":     "sub/bin",              // relative, stays inside
		tr.root + "/escape":     "../secret/key",        // relative, leaves the root
		tr.root + "/absolute":   tr.root + "/hello.txt", // absolute: refused by os.Root
		tr.root + "/sub/upward": "../hello.txt",         // relative, up but inside
		tr.root + "/dirlink":    "../secret",            // a directory outside
		tr.root + "/dangling":   "nowhere",              // to nothing
	}
	for l, target := range links {
		if err := os.Symlink(target, l); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(tr.root+"/fifo", 0o600); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestFSRead holds what host.fs.read serves and refuses, and what it
// audits, for every kind of path a plugin may send.
func TestFSRead(t *testing.T) {
	tr := newFSTree(t)
	h, err := NewFSRead(FSReadConfig{Roots: []string{tr.link}, MaxBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		want       string // the content, or the error's reason and its message's start
	}{
		{"a file", tr.root + "/hello.txt", `utf-8 5 hello`},
		{"through the root's link", tr.link + "/hello.txt", `utf-8 5 hello`},
		{"binary", tr.root + "/sub/bin", `base64 3 /wAB`},
		{"a link inside", tr.root + "/inside", `base64 3 /wAB`},
		{"a link up, inside", tr.root + "/sub/upward", `utf-8 5 hello`},
		{"unclean", tr.root + "/sub/../hello.txt", `utf-8 5 hello`},
		{"outside", tr.secret + "/key", "denied: host.fs.read: denied: " + tr.secret + "/key is not beneath a root the host serves (" + tr.link + ")"},
		{"dot-dot out", tr.root + "/../secret/key", "denied: host.fs.read: denied: " + tr.secret + "/key is not beneath"},
		{"relative", "hello.txt", `denied: host.fs.read: denied: "hello.txt" is not an absolute path`},
		{"a link leaving the root", tr.root + "/escape", "denied: host.fs.read: denied: " + tr.root + "/escape leads outside its root through a symbolic link"},
		{"through a directory link out", tr.root + "/dirlink/key", "denied: host.fs.read: denied: " + tr.root + "/dirlink/key leads outside"},
		{"an absolute link", tr.root + "/absolute", "denied: host.fs.read: denied: " + tr.root + "/absolute leads outside"},
		{"missing", tr.root + "/nope", "not_found: host.fs.read: " + tr.root + "/nope: no such file"},
		{"dangling", tr.root + "/dangling", "not_found: host.fs.read: " + tr.root + "/dangling: no such file"},
		{"a directory", tr.root + "/sub", "failed: host.fs.read: " + tr.root + "/sub is not a regular file (d"},
		{"a fifo", tr.root + "/fifo", "failed: host.fs.read: " + tr.root + "/fifo is not a regular file (p"},
		{"the root itself", tr.root, "failed: host.fs.read: " + tr.root + " is not a regular file"},
		{"too large", tr.root + "/big", "too_large: host.fs.read: " + tr.root + "/big is 2000 bytes, more than the 1000 the host serves"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := json.Marshal(map[string]string{"path": tt.path})
			o := call(t, h, FSRead, "read", string(in))
			got := ""
			if o.err != nil {
				got = o.reason() + ": " + o.err.Message
				if o.err.Code != protocol.CodePluginError {
					t.Errorf("code = %d, want %d", o.err.Code, protocol.CodePluginError)
				}
			} else {
				var c content
				if err := json.Unmarshal(o.out, &c); err != nil {
					t.Fatal(err)
				}
				got = c.Encoding + " " + strconv.Itoa(c.Size) + " " + c.Content
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			wantState := map[bool]string{true: observe.AuditAllowed, false: observe.AuditFailed}[o.err == nil]
			if o.reason() == "denied" {
				wantState = observe.AuditDenied
			}
			if o.state() != wantState || o.audits[0].Target != tt.path {
				t.Errorf("audits = %+v, want one %s of %s", o.audits, wantState, tt.path)
			}
			if o.err != nil && (o.audits[0].Err == nil || o.audits[0].Err.Error() != o.err.Error()) {
				t.Errorf("audit Err = %v, want %v", o.audits[0].Err, o.err)
			}
			if o.err == nil && !strings.HasPrefix(o.audits[0].Message, "read ") {
				t.Errorf("audit Message = %q", o.audits[0].Message)
			}
		})
	}
}

// TestFSReadInput: another method and bad input are refused before any
// path is looked at, and audit nothing.
func TestFSReadInput(t *testing.T) {
	h, err := NewFSRead(FSReadConfig{Roots: []string{t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ method, input, want string }{
		{"write", `{"path":"/x"}`, `host.fs.read has no method "write" (it has: read) (code -32601)`},
		{"read", ``, `host.fs.read.read: input must be {"path": string} (code -32602)`},
		{"read", `{"file":"/x"}`, `host.fs.read.read: input must be {"path": string} (code -32602)`},
		{"read", `{"path":3}`, `host.fs.read.read: input must be {"path": string} (code -32602)`},
	} {
		o := call(t, h, FSRead, tt.method, tt.input)
		if o.err == nil || o.err.Error() != tt.want || len(o.audits) != 0 {
			t.Errorf("%s %s: %v, audits %v; want %s and none", tt.method, tt.input, o.err, o.audits, tt.want)
		}
	}
}

// TestFSReadConfig: every problem of a config is reported at once, with
// its key; kernel.json's form decodes, unknown keys refused.
func TestFSReadConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewFSRead(FSReadConfig{Roots: []string{"rel", dir + "/missing", file, dir}, MaxBytes: MaxMaxBytes + 1})
	want := `host.fs.read: roots[0]: "rel": must be an absolute path; roots[1]: "` + dir + `/missing": lstat ` + dir + `/missing: no such file or directory; roots[2]: "` + file + `": must be a directory; max_bytes: 2097153 must be in 1..2097152`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant  %s", err, want)
	}
	if _, err := NewFSRead(FSReadConfig{}); err == nil || err.Error() != "host.fs.read: roots: at least one directory is required" {
		t.Errorf("no roots: %v", err)
	}
	var c FSReadConfig
	if err := json.Unmarshal([]byte(`{"roots": ["/srv"], "max_bytes": 10}`), &c); err != nil || c.Roots[0] != "/srv" || c.MaxBytes != 10 {
		t.Errorf("decode: %+v, %v", c, err)
	}
	if err := json.Unmarshal([]byte(`{"root": ["/srv"]}`), &c); err == nil || !strings.Contains(err.Error(), `unknown field "root"`) {
		t.Errorf("unknown key: %v", err)
	}
}
