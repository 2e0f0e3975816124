package main

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// notifySocketEnv names the socket the service manager (systemd) listens
// on for a Type=notify service's state (sd_notify(3)).
const notifySocketEnv = "NOTIFY_SOCKET"

// sdNotifier sends the service manager `run`'s state: READY=1 once the
// generation serves, RELOADING=1 (with MONOTONIC_USEC) and READY=1 around
// a reload, STOPPING=1 when it stops. A nil *sdNotifier, made when
// NOTIFY_SOCKET is unset, sends nothing.
type sdNotifier struct {
	addr *net.UnixAddr
}

// newSDNotifier returns the notifier of $NOTIFY_SOCKET, nil when it is
// unset; an address that is no Unix socket path (or abstract "@name") is
// an error.
func newSDNotifier() (*sdNotifier, error) {
	path := os.Getenv(notifySocketEnv)
	if path == "" {
		return nil, nil
	}
	if !strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "@") {
		return nil, fmt.Errorf("%s %q: not a Unix socket path (vsock is not supported)", notifySocketEnv, path)
	}
	// The net package maps a leading @ to Linux's abstract namespace.
	return &sdNotifier{addr: &net.UnixAddr{Name: path, Net: "unixgram"}}, nil
}

// ready says the kernel serves generation gen.
func (n *sdNotifier) ready(gen uint64) error {
	return n.send(fmt.Sprintf("READY=1\nSTATUS=generation %d serving", gen))
}

// reloading says a reload began, at the monotonic time systemd compares
// with its own reload request.
func (n *sdNotifier) reloading() error {
	msg := "RELOADING=1\nSTATUS=reloading"
	if usec, ok := monotonicUsec(); ok {
		msg = fmt.Sprintf("RELOADING=1\nMONOTONIC_USEC=%d\nSTATUS=reloading", usec)
	}
	return n.send(msg)
}

// stopping says the kernel is stopping its plugins.
func (n *sdNotifier) stopping() error {
	return n.send("STOPPING=1\nSTATUS=stopping")
}

// send writes msg as one datagram to the socket.
func (n *sdNotifier) send(msg string) error {
	if n == nil {
		return nil
	}
	conn, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", n.addr.Name, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(msg)); err != nil {
		return fmt.Errorf("sd_notify %s: %w", n.addr.Name, err)
	}
	return nil
}
