package benchkit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// Proc is a plugin process with pipes on its stdin and stdout; its stderr
// goes to the null device.
type Proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	name   string
}

// Spawn execs bin with args and an environment holding only the plugin
// name and version the plugins read (EXTKERNEL_PLUGIN_NAME,
// EXTKERNEL_PLUGIN_VERSION = 1.0.0).
func Spawn(bin, name string, args ...string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"EXTKERNEL_PLUGIN_NAME=" + name, "EXTKERNEL_PLUGIN_VERSION=1.0.0"}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Proc{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 64<<10), name: name}, nil
}

// PID returns the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Close closes the process's stdin, which makes a plugin exit, and waits
// for it. It must be called once, after every read of the process's
// stdout has returned.
func (p *Proc) Close() error {
	err := p.stdin.Close()
	return errors.Join(err, p.cmd.Wait())
}

// Echo writes line (which must end with a newline) and returns the next
// line read, valid until the next read.
func (p *Proc) Echo(line []byte) ([]byte, error) {
	if _, err := p.stdin.Write(line); err != nil {
		return nil, err
	}
	return p.stdout.ReadSlice('\n')
}

// wireRequest is a request as the floor client encodes it.
type wireRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// wireResponse is a response as the floor client decodes it.
type wireResponse struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *protocol.Error `json:"error"`
}

// Handshake sends initialize (request id 0) with the parameters a host
// sends and decodes the answer: the same exchange as sidecar.Start, in
// hand-written code, without checking the declarations against a
// manifest.
func (p *Proc) Handshake() (*protocol.InitializeResult, error) {
	line, err := json.Marshal(wireRequest{JSONRPC: wire.JSONRPCVersion, Method: wire.MethodInitialize,
		Params: protocol.InitializeParams{
			ProtocolVersion: protocol.Version,
			Host:            protocol.HostInfo{Name: "bench", Version: "0.0.0"},
			Plugin:          protocol.PluginInfo{Name: p.name, Version: "1.0.0"},
		}})
	if err != nil {
		return nil, err
	}
	answer, err := p.Echo(append(line, '\n'))
	if err != nil {
		return nil, fmt.Errorf("plugin %q: initialize: %w", p.name, err)
	}
	var resp wireResponse
	if err := json.Unmarshal(answer, &resp); err != nil {
		return nil, fmt.Errorf("plugin %q: initialize: %w", p.name, err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("plugin %q: initialize: %w", p.name, resp.Error)
	}
	res := new(protocol.InitializeResult)
	if err := json.Unmarshal(resp.Result, res); err != nil {
		return nil, fmt.Errorf("plugin %q: initialize result: %w", p.name, err)
	}
	if res.Name != p.name {
		return nil, fmt.Errorf("plugin %q: calls itself %q", p.name, res.Name)
	}
	return res, nil
}

// StartFloors execs bin once per name, at most pool at a time (a
// semaphore, launched in names' order), each with its handshake, and
// returns the processes in names' order. On failure every process started
// is closed.
func StartFloors(ctx context.Context, bin string, names []string, pool int) ([]*Proc, error) {
	procs, err := StartPool(ctx, names, pool, func(name string) (*Proc, error) {
		p, err := Spawn(bin, name)
		if err != nil {
			return nil, err
		}
		if _, err = p.Handshake(); err != nil {
			return nil, errors.Join(err, p.Close())
		}
		return p, nil
	})
	if err != nil {
		return nil, errors.Join(err, CloseAll(procs))
	}
	return procs, nil
}

// StartPool calls start once per name, at most pool at a time, launching
// in names' order, and returns the results in names' order with every
// error joined. Names not launched because ctx ended get ctx's error. The
// caller cleans up the non-zero results on error.
func StartPool[T any](ctx context.Context, names []string, pool int, start func(name string) (T, error)) ([]T, error) {
	out := make([]T, len(names))
	errs := make([]error, len(names))
	sem := semaphore.NewWeighted(int64(pool))
	var wg sync.WaitGroup
	for i, name := range names {
		if err := sem.Acquire(ctx, 1); err != nil {
			errs[i] = err
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer sem.Release(1)
			out[i], errs[i] = start(name)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// CloseAll closes the non-nil procs in parallel and joins their errors.
func CloseAll(procs []*Proc) error {
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// CloseClients closes every client in clients that is not nil (a start
// that failed left a nil), in parallel, and returns their errors joined
// in order: the host side's counterpart of CloseAll.
func CloseClients[C interface{ Close(context.Context) error }](ctx context.Context, clients []C) error {
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	var none C
	for i, c := range clients {
		if any(c) == any(none) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Close(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
