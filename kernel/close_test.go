//go:build unix

package kernel

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// spawned returns a plug that never answers its handshake (within the
// longest handshake timeout a manifest may set, 60s) and a channel that receives once its process runs:
// the plugin writes its pid into a FIFO the test reads.
func spawned(t *testing.T, name string) (plug, <-chan struct{}) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "pid")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	ch := make(chan struct{})
	go func() {
		f, err := os.Open(fifo) // blocks until the plugin opens it
		if err != nil {
			return
		}
		defer f.Close()
		if bufio.NewScanner(f).Scan() {
			close(ch)
		}
	}()
	t.Cleanup(func() {
		// Unblock the reader if the plugin never ran.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return plug{name: name, handshake: "60s", env: map[string]string{"SCRIPT_START": "hang", "SCRIPT_PIDFILE": fifo}}, ch
}

// TestCloseCancelsBuild closes the kernel while a build waits for a plugin
// that never completes its handshake, under a long startup budget: Close
// returns within its short context, the build fails with ErrClosed, and
// nothing is left running.
func TestCloseCancelsBuild(t *testing.T) {
	tests := []struct {
		name  string
		build func(t *testing.T, k *Kernel, home string, slow plug) error
	}{
		{"start", func(t *testing.T, k *Kernel, _ string, _ plug) error {
			return k.Start(context.Background())
		}},
		{"reload", func(t *testing.T, k *Kernel, home string, slow plug) error {
			if err := k.Start(context.Background()); err != nil {
				t.Error(err)
				return nil
			}
			writeHomePackage(t, home, slow)
			_, err := k.Reload(context.Background())
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			slow, running := spawned(t, "slow")
			plugs := []plug{{name: "steady"}}
			if tt.name == "start" {
				plugs = append(plugs, slow)
			}
			home := writeHome(t, plugs...)
			cfg := testConfig(home)
			cfg.StartupBudget = 10 * time.Minute
			k, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { k.Close(context.Background()) })
			built := make(chan error, 1)
			go func() { built <- tt.build(t, k, home, slow) }()
			// Generous, yet well below the 60s the handshake may take.
			deadline := time.NewTimer(30 * time.Second)
			defer deadline.Stop()
			select {
			case <-running:
			case err := <-built:
				t.Fatalf("the build returned before the hanging plugin ran: %v", err)
			case <-deadline.C:
				t.Fatal("the hanging plugin never started")
			}

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			closed := make(chan error, 1)
			go func() { closed <- k.Close(ctx) }()
			select {
			case err := <-closed:
				if err != nil {
					t.Errorf("Close: %v", err)
				}
			case <-deadline.C:
				t.Fatal("Close is still waiting behind the build")
			}
			if err := <-built; !errors.Is(err, ErrClosed) {
				t.Errorf("the build returned %v, want an error wrapping ErrClosed", err)
			}
			noChildren(t)
		})
	}
}
