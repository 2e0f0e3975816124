//go:build !unix

package admin

import (
	"net"
	"os"
)

// listenUnix listens on path directly (no link step where hard links to
// sockets are not portable) and makes it 0600 where modes apply.
func listenUnix(path string) (net.Listener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false) // Listener.Close removes path
	os.Chmod(path, 0o600)
	return ln, nil
}
