package sidecar

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/internal/wire"
	"github.com/extkernel/extkernel/protocol"
)

// TestTakeFeatures holds which features the host takes a plugin to use
// from its answer to initialize (docs/protocol.md §4.6): an answer of
// 1.4 or later is read, unknown names ignored; an earlier one is taken to
// use every feature of 1.3, its own features member ignored.
func TestTakeFeatures(t *testing.T) {
	tests := []struct {
		name, result string
		want         []string
	}{
		{"1.4, some", `{"protocol_version":"1.4.0","features":["progress","telepathy","calls"]}`, []string{"calls", "progress"}},
		{"1.4, none", `{"protocol_version":"1.4.0"}`, []string{}},
		{"1.4, empty", `{"protocol_version":"1.4.0","features":[]}`, []string{}},
		{"later minor", `{"protocol_version":"1.9.2","features":["trace"]}`, []string{"trace"}},
		{"1.3, flags ignored", `{"protocol_version":"1.3.0","features":["trace"]}`, wire.Features13.Names()},
		{"1.0", `{"protocol_version":"1.0.0"}`, wire.Features13.Names()},
		{"not an object", `[1]`, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{}
			c.takeFeatures(json.RawMessage(tt.result))
			if got := wire.Features(c.features.Load()).Names(); !slices.Equal(got, tt.want) {
				t.Errorf("features %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFeatureProblems holds that a 1.4 answer declaring contributions
// without the "contributions" feature fails the handshake, and that an
// older answer's contributions need no flag.
func TestFeatureProblems(t *testing.T) {
	decls := []protocol.ContributionDecl{{Kind: "tool", Key: "search.web"}}
	tests := []struct {
		name     string
		features wire.Features
		version  string
		decls    []protocol.ContributionDecl
		want     []string
	}{
		{"announced", wire.HasContributions, "1.4.0", decls, nil},
		{"not announced", wire.HasCalls, "1.4.0", decls,
			[]string{`contributions: 1 declared, but the answer (protocol 1.4.0) does not announce the "contributions" feature`}},
		{"none declared", 0, "1.4.0", nil, nil},
		{"before 1.4", wire.Features13, "1.1.0", decls, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{}
			c.features.Store(uint32(tt.features))
			got := c.featureProblems(&protocol.InitializeResult{ProtocolVersion: tt.version, Contributions: tt.decls})
			if !slices.Equal(got, tt.want) {
				t.Errorf("problems %q, want %q", got, tt.want)
			}
		})
	}
}

// TestUntraced holds that the host sends no traceparent to a plugin that
// does not use trace context, in any request that carries one.
func TestUntraced(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	params := []any{
		wire.InterceptParams{Point: "p", Traceparent: tp},
		wire.StrategyInvokeParams{Slot: "s", Traceparent: tp},
		wire.ProviderInvokeParams{Ref: "r", Traceparent: tp},
		wire.ActionRunParams{ID: "a", Traceparent: tp},
		wire.ContributionInvokeParams{Kind: "k", Key: "x", Traceparent: tp},
	}
	for _, traced := range []bool{true, false} {
		c := &Client{}
		if traced {
			c.features.Store(uint32(wire.HasTrace))
		}
		for _, p := range params {
			b, _ := json.Marshal(c.untraced(p))
			if strings.Contains(string(b), tp) != traced {
				t.Errorf("trace %v: %T sent as %s", traced, p, b)
			}
		}
	}
}

// TestUnannouncedWarnedOnce holds that an unannounced use is logged once
// per process and feature, however often it comes.
func TestUnannouncedWarnedOnce(t *testing.T) {
	logs := new(logBuffer)
	c := &Client{log: hclog.New(&hclog.LoggerOptions{Output: logs, JSONFormat: true})}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.unannounced(wire.HasProgress, "its $/progress is ignored")
			c.unannounced(wire.HasCancel, "its $/cancel is ignored")
		}()
	}
	wg.Wait()
	for _, f := range []string{"progress", "cancel"} {
		if n := strings.Count(logs.String(), fmt.Sprintf(`the plugin uses the \"%s\" feature`, f)); n != 1 {
			t.Errorf("%s warned %d times, want once:\n%s", f, n, logs)
		}
	}
}
