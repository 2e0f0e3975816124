package benchkit

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/extkernel/extkernel/internal/wire"
)

// JSONClient is the floor of a multiplexed JSON-RPC client over a plugin's
// pipes: callers encode and write their request under a write lock, one
// reader goroutine decodes every response and hands it, through a map of
// pending ids, to the caller's channel.
type JSONClient struct {
	p    *Proc
	next atomic.Int64
	wmu  sync.Mutex    // serializes writes to stdin
	done chan struct{} // closed when the reader returned

	mu struct {
		sync.Mutex
		pending map[int64]chan wireResponse
		err     error // why the reader stopped, set before done closes
	}
}

// StartJSONClient spawns bin as name, completes the handshake and returns
// the client of the process.
func StartJSONClient(bin, name string) (*JSONClient, error) {
	p, err := Spawn(bin, name)
	if err != nil {
		return nil, err
	}
	if _, err := p.Handshake(); err != nil {
		return nil, errors.Join(err, p.Close())
	}
	return NewJSONClient(p), nil
}

// NewJSONClient starts the reader of p, which must have completed its
// handshake. The client owns p from then on.
func NewJSONClient(p *Proc) *JSONClient {
	c := &JSONClient{p: p, done: make(chan struct{})}
	c.mu.pending = make(map[int64]chan wireResponse)
	go c.read()
	return c
}

func (c *JSONClient) read() {
	defer close(c.done)
	for {
		line, err := c.p.stdout.ReadSlice('\n')
		var resp wireResponse
		if err == nil {
			err = json.Unmarshal(line, &resp)
		}
		if err != nil {
			c.mu.Lock()
			c.mu.err = fmt.Errorf("read: %w", err)
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		ch := c.mu.pending[resp.ID]
		delete(c.mu.pending, resp.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
}

// PID returns the plugin's process id.
func (c *JSONClient) PID() int { return c.p.PID() }

// Call sends method with params and decodes the result into result (nil
// discards it). An error answer is returned as its *protocol.Error.
func (c *JSONClient) Call(method string, params, result any) error {
	id := c.next.Add(1)
	line, err := json.Marshal(wireRequest{JSONRPC: wire.JSONRPCVersion, ID: id, Method: method, Params: params})
	if err != nil {
		return err
	}
	line = append(line, '\n')
	ch := make(chan wireResponse, 1)
	c.mu.Lock()
	c.mu.pending[id] = ch
	c.mu.Unlock()
	c.wmu.Lock()
	_, err = c.p.stdin.Write(line)
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return err
	}
	select {
	case resp := <-ch:
		if resp.Error != nil {
			return resp.Error
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(resp.Result, result)
	case <-c.done:
		c.forget(id)
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.mu.err
	}
}

func (c *JSONClient) forget(id int64) {
	c.mu.Lock()
	delete(c.mu.pending, id)
	c.mu.Unlock()
}

// Close closes the plugin's stdin, waits for the reader to see the end of
// its stdout, and waits for the process.
func (c *JSONClient) Close() error {
	err := c.p.stdin.Close()
	<-c.done
	return errors.Join(err, c.p.cmd.Wait())
}
