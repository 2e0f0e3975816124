package admin_test

import (
	"context"
	"flag"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/goleak"

	"github.com/extkernel/extkernel/admin"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
)

var update = flag.Bool("update", false, "rewrite the golden answers under testdata/ and their copies in docs/admin.md")

const (
	demoHome   = "../testdata/demo/home"
	demoConfig = "../testdata/demo/kernel.json"
	// waitLimit bounds every wait of these tests.
	waitLimit = 30 * time.Second
)

func TestMain(m *testing.M) {
	flag.Parse()
	if out, err := exec.Command("go", "run", "../testdata/demo/build", demoHome).CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.Stderr.WriteString("building the demo plugins: " + err.Error() + "\n")
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

// fixture is a started demo kernel served on a socket.
type fixture struct {
	home string
	k    *kernel.Kernel
	ring *admin.LogRing
	srv  *admin.Server
	ln   *admin.Listener
	c    *admin.Client
	raw  *http.Client // for requests the Client does not make
}

// copyHome copies the demo home's packages (plugins built) and state into
// a temporary directory, so that a test may change them.
func copyHome(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	for _, name := range []string{"packages", "state.json"} {
		src := filepath.Join(demoHome, name)
		err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(demoHome, path)
			to := filepath.Join(dst, rel)
			if d.IsDir() {
				return os.MkdirAll(to, 0o755)
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(to, data, info.Mode().Perm())
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// socketPath returns a socket path short enough for every platform.
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "adm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "run", "admin.sock")
}

// start starts the demo kernel on a copy of the demo home, its config
// changed by change, and serves it;
// everything stops at the test's end.
func start(t *testing.T, opts admin.Options, change ...func(*config.Config)) *fixture {
	t.Helper()
	f := &fixture{home: copyHome(t)}
	cfg, err := config.Load(demoConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Home = f.home
	for _, c := range change {
		c(&cfg)
	}
	log := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "test", Output: io.Discard, Level: hclog.Error})
	f.ring = admin.NewLogRing(admin.LogRingOptions{Root: "test"})
	log.RegisterSink(f.ring)
	cfg.Logger = log
	if f.k, err = kernel.New(cfg); err != nil {
		t.Fatal(err)
	}
	if opts.Logs == nil {
		opts.Logs = f.ring
	}
	f.srv = admin.NewServer(f.k, opts)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := f.k.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if f.ln, err = admin.Listen(socketPath(t)); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- f.srv.Serve(f.ln) }()
	t.Cleanup(func() {
		f.raw.CloseIdleConnections()
		f.c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := f.srv.Close(ctx); err != nil {
			t.Errorf("server close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := f.k.Close(ctx); err != nil {
			t.Errorf("kernel close: %v", err)
		}
	})
	if f.c, err = admin.Dial(f.ln.Path); err != nil {
		t.Fatal(err)
	}
	f.raw = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", f.ln.Path)
	}}}
	return f
}

// request sends a raw request and returns the status and body.
func (f *fixture) request(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://admin"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.raw.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}
