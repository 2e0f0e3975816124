package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/extkernel/extkernel/sdk"
)

// addContributions registers SCRIPT_CONTRIBUTE, "kind:key[@priority]
// [=behaviour],...": contributions of host kinds (protocol 1.1), each with
// the data {"by": name} and a handler by behaviour: echo (the default)
// answers {"plugin": name, "kind": kind, "key": key, "input": input}, fail
// answers an error, read registers no handler.
func addContributions(p *sdk.Plugin, name string) {
	for _, spec := range list("SCRIPT_CONTRIBUTE") {
		target, behaviour, _ := strings.Cut(spec, "=")
		kindKey, prio, hasPrio := strings.Cut(target, "@")
		kind, key, _ := strings.Cut(kindKey, ":")
		c := sdk.Contribution{Title: kind + " " + key, Data: map[string]string{"by": name}}
		if hasPrio {
			n, err := strconv.Atoi(prio)
			if err != nil {
				panic(err)
			}
			c.Priority = &n
		}
		var h sdk.HandlerFunc
		switch behaviour {
		case "", "echo":
			h = func(_ context.Context, in json.RawMessage) (any, error) {
				return map[string]any{"plugin": name, "kind": kind, "key": key, "input": in}, nil
			}
		case "fail":
			h = func(context.Context, json.RawMessage) (any, error) {
				return nil, errors.New(name + " failed on purpose")
			}
		}
		p.Contribute(kind, key, c, h)
	}
}
