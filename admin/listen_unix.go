//go:build unix

package admin

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// listenUnix binds a socket under a temporary name in path's directory,
// makes it 0600, listens, and links it to path: the path appears only once
// it answers, with its final mode, and an existing path is never replaced
// (link fails on it).
func listenUnix(path string) (net.Listener, error) {
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%s.%d.tmp", filepath.Base(path), os.Getpid()))
	os.Remove(tmp) // left by an earlier listener of this pid
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false) // Listener.Close removes path, tmp is gone
	defer os.Remove(tmp)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	if err := os.Link(tmp, path); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}
