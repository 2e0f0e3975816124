//go:build linux

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/extkernel/extkernel/internal/plugintest"
	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/pluginpkg"
)

// buildEscape builds the hostile plugin testdata/plugins/escape into
// binDir, once per test binary, for the tests that need it only.
var buildEscape = sync.OnceValue(func() error { return plugintest.Build("..", binDir, "escape") })

// The texts of the files the escape suite plants outside the plugin's
// grants: none may ever reach the plugin.
const (
	keyText    = "-----BEGIN OPENSSH PRIVATE KEY-----\nescape-suite key\n-----END OPENSSH PRIVATE KEY-----\n"
	secretText = "escape-suite secret"
	notesText  = "the package's own notes"
	lootText   = "the plugin's own data"
)

// escapeWorld is what the hostile plugin is aimed at: a kernel home with
// the escape package and another package, a HOME with an SSH key, data
// directories, listeners that count what reaches them, setuid binaries
// and another running plugin. Everything but the escape package's own
// directories lies outside its grants.
type escapeWorld struct {
	root       string // the kernel's home: packages/, run/admin.sock
	pkgDir     string // the escape package's directory, ${package}
	home       string // the HOME the plugin is given; .ssh/id_ed25519 in it
	data       string // the escape plugin's data directory, ${data}
	otherData  string // another package's data directory, holding "secret"
	otherPkg   string // another package's directory, holding "credentials.json"
	outside    string // a directory in no grant, holding "secret"
	suid       string // a setuid-root copy of the plugin (not as root: su), in no grant
	suidNobody string // a copy setuid to nobody (65534), granted in exec; "" unless root

	granted   *watch // the one TCP port the net permissions grant
	forbidden *watch // another TCP port, in no grant
	udp       *watch // a UDP port (also the DNS server of dns-query)
	admin     *watch // the kernel's admin socket, <root>/run/admin.sock
	abstract  *watch // an abstract UNIX socket

	target *Client // another plugin (good, confined): signalled and traced
	opts   Options
}

// newEscapeWorld builds the world and starts the target plugin; cleanups
// stop and close everything it started.
func newEscapeWorld(t *testing.T) *escapeWorld {
	t.Helper()
	if err := buildEscape(); err != nil {
		t.Fatal(err)
	}
	w := &escapeWorld{root: t.TempDir(), home: t.TempDir(), outside: t.TempDir()}
	w.opts, _ = testOptions(t)
	w.opts.Env = map[string]string{"HOME": w.home}
	w.data = filepath.Join(w.opts.DataRoot, "escape")
	w.otherData = filepath.Join(w.opts.DataRoot, "other")
	pkg := plugintest.Install(t, w.root, "escape", escapeManifest("escape", permFiles, w), binDir, "escape")
	w.pkgDir = pkg.Dir
	other := plugintest.Install(t, w.root, "other", plugintest.GoodManifest("other", false), binDir, "good")
	w.otherPkg = other.Dir
	for path, text := range map[string]string{
		filepath.Join(w.home, ".ssh", "id_ed25519"):   keyText,
		filepath.Join(w.otherData, "secret"):          secretText,
		filepath.Join(w.otherPkg, "credentials.json"): secretText,
		filepath.Join(w.outside, "secret"):            secretText,
		filepath.Join(w.pkgDir, "notes.txt"):          notesText,
		filepath.Join(w.data, "loot"):                 lootText,
		filepath.Join(w.home, ".bashrc"):              secretText,
	} {
		writeFile(t, path, text)
	}
	if err := os.Symlink(filepath.Join(w.outside, "secret"), filepath.Join(w.pkgDir, "escape-link")); err != nil {
		t.Fatal(err)
	}
	w.suid = setuidCopy(t, filepath.Join(w.outside, "suid", "escape"), 0)
	if w.suid == "" {
		w.suid = systemSetuid()
	}
	w.suidNobody = setuidCopy(t, filepath.Join(w.outside, "granted", "escape"), 65534)
	w.granted = watchStream(t, "tcp", "127.0.0.1:0")
	w.forbidden = watchStream(t, "tcp", "127.0.0.1:0")
	w.udp = watchUDP(t)
	w.admin = watchStream(t, "unix", filepath.Join(w.root, "run", "admin.sock"))
	w.abstract = watchStream(t, "unix", fmt.Sprintf("@extkernel-escape-%d-%s", os.Getpid(), filepath.Base(w.root)))
	w.startTarget(t)
	return w
}

// writeFile writes text to path (mode 0600), creating its directory.
func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// setuidCopy copies the escape binary to path, owned by uid, mode 4755:
// run, it would run as uid were setuid bits honoured. Only root may give
// a file away: for another user it returns "" (the cases that need it say
// so and skip).
func setuidCopy(t *testing.T, path string, uid int) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(filepath.Join(binDir, "escape"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, in)
	if err = errors.Join(err, out.Close()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, uid); err != nil {
		t.Logf("no setuid copy of the escape plugin (only root can make one): %v", err)
		return ""
	}
	if err := os.Chmod(path, 0o4755); err != nil {
		t.Fatal(err)
	}
	return path
}

// systemSetuid returns a setuid-root program of the system (su, passwd,
// mount), "" when none is found: what exec-setuid runs when the suite,
// not running as root, cannot make its own.
func systemSetuid() string {
	for _, p := range []string{"/usr/bin/su", "/bin/su", "/usr/bin/passwd", "/usr/bin/mount", "/bin/mount"} {
		if st, err := os.Stat(p); err == nil && st.Mode()&os.ModeSetuid != 0 {
			return p
		}
	}
	return ""
}

// startTarget starts the other package's plugin (the good one) confined
// (best-effort, so that an older kernel runs it too), as a kernel
// confining every plugin would: the one the escape plugin signals and
// traces.
func (w *escapeWorld) startTarget(t *testing.T) {
	t.Helper()
	other := parsePackage(t, w.otherPkg, "other")
	opts := w.opts
	opts.Confinement = pluginpkg.Confinement{Mode: pluginpkg.ConfineBestEffort}
	c, err := Start(context.Background(), other, opts)
	if err != nil {
		t.Fatalf("start the target plugin: %v", err)
	}
	w.target = c
	t.Cleanup(func() { closeClient(t, c) })
}

// targetAlive reports whether the target plugin still answers.
func (w *escapeWorld) targetAlive() error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := ping(w.target, ctx); err != nil {
		return fmt.Errorf("the target plugin (pid %d) does not answer: %w", w.target.PID(), err)
	}
	return nil
}

// parsePackage parses the package in dir, enabled.
func parsePackage(t *testing.T, dir, name string) *pluginpkg.Package {
	t.Helper()
	path := filepath.Join(dir, pluginpkg.ManifestFile)
	m, err := pluginpkg.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &pluginpkg.Package{Name: name, Dir: dir, Manifest: m, Enabled: true,
		ManifestPath: filepath.ToSlash(filepath.Join(pluginpkg.PackagesDir, name, pluginpkg.ManifestFile))}
}

// The permissions the escape package declares, by case: realistic ones,
// so that what is denied is what lies beyond them.
const (
	permFiles = "files" // its package read, ${data} and ${tmp} written: no network, no exec
	permNet   = "net"   // and TCP to the granted port ("*:PORT")
	permExec  = "exec"  // and the setuid-to-nobody binary in exec
	permDNS   = "dns"   // and a host name on port 443, which needs DNS
)

// escapeManifest is the escape package's manifest with the permissions
// perms stands for.
func escapeManifest(name, perms string, w *escapeWorld) string {
	fs := `"fs": {"read": ["${package}"], "write": ["${data}", "${tmp}"]}`
	extra := ""
	switch perms {
	case permNet:
		extra = `, "net": {"connect": ["*:` + w.granted.port() + `"]}`
	case permExec:
		extra = `, "exec": ["` + w.suidNobody + `"]`
	case permDNS:
		extra = `, "net": {"connect": ["api.example.com:443", "*:443"]}`
	}
	return `{"format": 1, "name": "` + name + `", "version": "1.0.0",
  "runtime": {"command": "./escape"}, "permissions": {` + fs + extra + `}}`
}

// pkg rewrites the escape package's manifest with perms and returns the
// package.
func (w *escapeWorld) pkg(t *testing.T, perms string) *pluginpkg.Package {
	t.Helper()
	writeFile(t, filepath.Join(w.pkgDir, pluginpkg.ManifestFile), escapeManifest("escape", perms, w))
	return parsePackage(t, w.pkgDir, "escape")
}

// start starts the escape plugin with perms under mode.
func (w *escapeWorld) start(t *testing.T, perms, mode string) (*Client, error) {
	t.Helper()
	opts := w.opts
	opts.Confinement = pluginpkg.Confinement{Mode: mode}
	return Start(context.Background(), w.pkg(t, perms), opts)
}

// attempt calls the plugin's provider do with a and returns its answer.
func attempt(t *testing.T, c *Client, do string, a escapeAttempt) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	in, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Invoke(ctx, wire.MethodProviderInvoke, wire.ProviderInvokeParams{Ref: do, Input: in})
	if err != nil {
		t.Fatalf("%s: %v", do, err)
	}
	var got string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s answered %s: %v", do, out, err)
	}
	return got
}

// escapeAttempt is the escape plugin's Attempt (testdata/plugins/escape).
type escapeAttempt struct {
	Do     string          `json:"do,omitempty"`
	Path   string          `json:"path,omitempty"`
	To     string          `json:"to,omitempty"`
	Addr   string          `json:"addr,omitempty"`
	PID    int             `json:"pid,omitempty"`
	Signal int             `json:"signal,omitempty"`
	Args   []string        `json:"args,omitempty"`
	Then   []escapeAttempt `json:"then,omitempty"`
}

// watch is a listener that counts what reaches it: connections accepted
// or datagrams received.
type watch struct {
	addr string
	hits atomic.Int32
	hit  chan struct{} // a value per hit, while it has room
}

// newWatch returns a watch of addr.
func newWatch(addr string) *watch { return &watch{addr: addr, hit: make(chan struct{}, 16)} }

// count counts a hit.
func (w *watch) count() {
	w.hits.Add(1)
	select {
	case w.hit <- struct{}{}:
	default:
	}
}

// port returns the watch's port.
func (w *watch) port() string {
	_, p, _ := net.SplitHostPort(w.addr)
	return p
}

// watchStream listens on network and addr and counts the connections it
// accepts, until the test ends.
func watchStream(t *testing.T, network, addr string) *watch {
	t.Helper()
	if network == "unix" && addr[0] != '@' {
		if err := os.MkdirAll(filepath.Dir(addr), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	w := newWatch(l.Addr().String())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			w.count()
			c.Close()
		}
	}()
	t.Cleanup(func() { l.Close(); <-done })
	return w
}

// watchUDP counts the datagrams a UDP port on 127.0.0.1 receives, until
// the test ends.
func watchUDP(t *testing.T) *watch {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	w := newWatch(c.LocalAddr().String())
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1024)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			w.count()
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return w
}

// reapWithin waits for pid, a child of the test (an orphan it adopted as
// the subreaper), to exit, killing it when it outlives the test bound.
func reapWithin(t *testing.T, pid int) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		done <- err
	}()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("wait for %d: %v", pid, err)
		}
	case <-timer.C:
		t.Errorf("process %d still runs after %v: killed", pid, within)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		<-done
	}
}

// atoi parses a pid, failing the test otherwise.
func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
