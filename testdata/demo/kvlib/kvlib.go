// Package kvlib is the demo's in-memory key-value store plugin, offered to
// other plugins as the storage.kv capability; the kvstore and kvstore-next
// demo packages serve it under their own identities.
package kvlib

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/extkernel/extkernel/sdk"
)

// Serve serves the key-value store under the given identity.
func Serve(name, version string) {
	var mu sync.Mutex
	data := map[string]json.RawMessage{}
	p := sdk.New(name, version)
	p.Provide("storage.kv", version)
	p.Provider("get", "Returns the value stored under a key.", func(_ context.Context, in json.RawMessage) (any, error) {
		var key string
		if err := json.Unmarshal(in, &key); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		return data[key], nil
	})
	p.Provider("put", "Stores {\"key\": ..., \"value\": ...}.", func(_ context.Context, in json.RawMessage) (any, error) {
		var kv struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(in, &kv); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		data[kv.Key] = kv.Value
		return nil, nil
	})
	p.Serve()
}
