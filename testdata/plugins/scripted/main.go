// Command scripted is a test plugin whose declarations and behaviour come
// from its environment (set by the manifest's runtime.env), so kernel and
// generation tests can build any plugin graph from one binary:
//
//	SCRIPT_INTERCEPT  "point=behaviour[@priority],..." where behaviour is
//	                  continue, modify (appends the plugin name to a JSON
//	                  array payload), deny, fail, hang, crash, or chaos
//	                  (mostly modify; sometimes slow, hang, fail, crash or
//	                  one of the SCRIPT_FAULTS, at random; see chaos.go)
//	SCRIPT_SLOTS      "slot,..." claimed; the strategy echoes
//	                  {"owner": name, "input": input}
//	SCRIPT_PROVIDERS  "ref[=behaviour],..." each echoing its input;
//	                  behaviour is echo (the default), fail (an error
//	                  answer), crash (exits 7) or chaos
//	SCRIPT_ACTIONS    "id[=behaviour],..." each answering {"ran": id};
//	                  behaviour is run (the default) or chaos
//	SCRIPT_FAULTS     "fault,..." more faults chaos may pick: hostile
//	                  (writes garbage, an oversized line or a response
//	                  with two ids to stdout), orphan (starts a `sleep`
//	                  in a new session holding the plugin's stdout and
//	                  stderr, then crashes or goes on)
//	SCRIPT_LOG        a file the plugin appends one line to for each
//	                  SCRIPT_FAULTS fault and SCRIPT_FLOODS flood it
//	                  commits ("hostile garbage", "orphan <pid>", "flood
//	                  notify 120")
//	SCRIPT_CALLS      set: providers for calls through the host (protocol
//	                  1.1; see calls.go): "call" makes the call its input
//	                  {"capability","method","input"} names and answers
//	                  its output or its error; "cycle", given {"via":
//	                  [capability,...],"hop":n}, calls method "cycle" of
//	                  via[n mod len(via)] with hop n+1, a cycle only an
//	                  error ends; "relay" consumes the stream its input
//	                  names ("delay_ms" after each chunk, or a stall of
//	                  "stall_ms" after chunk "stall_at", then a cancel)
//	                  and answers {"chunks","bytes"} or the stream's
//	                  error; "stream" streams {"n"} chunks {"i","pad"}
//	                  with {"size"} bytes of padding, chaos deciding
//	                  whether it is slow, hangs, fails or crashes half way
//	SCRIPT_FLOODS     "kind,...": floods the plugin sends every 400ms or
//	                  so, a kind at random: notify, garbage (malformed
//	                  messages), stderr, log or wide (see floods.go)
//	SCRIPT_DATA       "ref": a provider that writes its input to the file
//	                  "written" in the data directory initialize sent, and
//	                  returns {"data_dir": that, "env": EXTKERNEL_DATA_DIR}
//	SCRIPT_NOTIFY     "ref": a provider that sends the notify "called"
//	                  with its input as data; given the input "block", it
//	                  then waits until the call is cancelled and sends
//	                  "cancelled"
//	SCRIPT_INIT       "ref": a provider returning the initialize params the
//	                  plugin received (not together with SCRIPT_DATA or
//	                  SCRIPT_EXIT_AFTER)
//	SCRIPT_SCHEMAS    a JSON object {"ref": schema, ...}: providers declared
//	                  with that input schema, each answering
//	                  {"input": input, "calls": calls so far, this one
//	                  included}
//	SCRIPT_PROVIDES   "capability@version,..."
//	SCRIPT_CONTRIBUTE "kind:key[@priority][=behaviour],...": contributions
//	                  of host kinds (protocol 1.1); behaviour is echo (the
//	                  default), fail or read (see contribute.go)
//	SCRIPT_START      "exit" exits before the handshake; "hang" never
//	                  answers it
//	SCRIPT_EXIT_AFTER a duration: the plugin exits with status 7 that long
//	                  after the host's initialize request (a crash loop
//	                  without any call)
//	SCRIPT_PIDFILE    a file the plugin appends its pid to
//	SCRIPT_LEAK       the name of a variable whose value the plugin prints
//	                  to stderr at start and puts in its failure messages
//	                  (to test redaction)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

func list(env string) []string {
	v := os.Getenv(env)
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func main() {
	name := os.Getenv("EXTKERNEL_PLUGIN_NAME")
	if f := os.Getenv("SCRIPT_PIDFILE"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(fh, os.Getpid())
			fh.Close()
		}
	}
	if v := os.Getenv("SCRIPT_LEAK"); v != "" {
		fmt.Fprintf(os.Stderr, "starting with %s=%s\n", v, os.Getenv(v))
	}
	switch os.Getenv("SCRIPT_START") {
	case "exit":
		fmt.Fprintln(os.Stderr, "scripted: exiting before the handshake as told")
		os.Exit(3)
	case "hang":
		time.Sleep(time.Hour) // killed by the host's stop sequence
	}
	p := sdk.New(name, os.Getenv("EXTKERNEL_PLUGIN_VERSION"))
	var onInit []func(protocol.InitializeParams)
	if v := os.Getenv("SCRIPT_EXIT_AFTER"); v != "" {
		onInit = append(onInit, exitAfter(v))
	}
	for _, kv := range list("SCRIPT_PROVIDES") {
		key, version, _ := strings.Cut(kv, "@")
		p.Provide(key, version)
	}
	for _, spec := range list("SCRIPT_INTERCEPT") {
		addInterceptor(p, name, spec)
	}
	for _, slot := range list("SCRIPT_SLOTS") {
		p.Strategy(slot, func(_ context.Context, in json.RawMessage) (any, error) {
			return map[string]any{"owner": name, "input": in}, nil
		})
	}
	for _, spec := range list("SCRIPT_PROVIDERS") {
		ref, behaviour, _ := strings.Cut(spec, "=")
		p.Provider(ref, "echoes its input", func(ctx context.Context, in json.RawMessage) (any, error) {
			return in, misbehave(ctx, behaviour)
		})
	}
	if ref := os.Getenv("SCRIPT_DATA"); ref != "" {
		onInit = append(onInit, addDataWriter(p, ref))
	}
	addEmbedderProviders(p)
	addCallers(p)
	if kinds := list("SCRIPT_FLOODS"); len(kinds) > 0 {
		onInit = append(onInit, startFloods(p, kinds))
	}
	addContributions(p, name)
	if len(onInit) > 0 {
		p.OnInitialize(func(_ context.Context, params protocol.InitializeParams) error {
			for _, fn := range onInit {
				fn(params)
			}
			return nil
		})
	}
	for _, spec := range list("SCRIPT_ACTIONS") {
		id, behaviour, _ := strings.Cut(spec, "=")
		p.Action(id, "Run "+id, "toolbar", func(ctx context.Context, _ json.RawMessage) (any, error) {
			return map[string]string{"ran": id}, misbehave(ctx, behaviour)
		})
	}
	serve(p)
}

// exitAfter returns the initialize hook that makes the plugin exit with
// status 7 d later.
func exitAfter(d string) func(protocol.InitializeParams) {
	delay, err := time.ParseDuration(d)
	if err != nil {
		panic(err)
	}
	return func(protocol.InitializeParams) {
		time.AfterFunc(delay, func() {
			fmt.Fprintln(os.Stderr, "scripted: exiting after", d, "as told")
			os.Exit(7)
		})
	}
}

// addDataWriter registers the SCRIPT_DATA provider ref and returns the
// initialize hook that learns the data directory.
func addDataWriter(p *sdk.Plugin, ref string) func(protocol.InitializeParams) {
	var dataDir string
	p.Provider(ref, "writes its input into the data directory", func(_ context.Context, in json.RawMessage) (any, error) {
		if err := os.WriteFile(filepath.Join(dataDir, "written"), in, 0o600); err != nil {
			return nil, err
		}
		return map[string]string{"data_dir": dataDir, "env": os.Getenv("EXTKERNEL_DATA_DIR")}, nil
	})
	return func(params protocol.InitializeParams) { dataDir = params.Plugin.DataDir }
}

func addInterceptor(p *sdk.Plugin, name, spec string) {
	point, behaviour, _ := strings.Cut(spec, "=")
	behaviour, prio, hasPrio := strings.Cut(behaviour, "@")
	h := func(ctx context.Context, _ string, payload json.RawMessage) (protocol.InterceptResult, error) {
		b := behaviour
		if b == "chaos" {
			b = chaos(ctx)
		}
		if b == "hostile" || b == "orphan" {
			commit(b)
			b = "modify"
		}
		switch b {
		case "modify":
			var seen []string
			_ = json.Unmarshal(payload, &seen)
			return sdk.Modify(append(seen, name)), nil
		case "deny":
			return sdk.Deny(name + " says no"), nil
		case "fail":
			msg := name + " failed on purpose"
			if v := os.Getenv("SCRIPT_LEAK"); v != "" {
				msg += " with " + os.Getenv(v)
			}
			return protocol.InterceptResult{}, &protocol.Error{Code: protocol.CodePluginError, Message: msg}
		case "hang":
			<-ctx.Done()
			return protocol.InterceptResult{}, ctx.Err()
		case "crash":
			if v := os.Getenv("SCRIPT_LEAK"); v != "" {
				fmt.Fprintf(os.Stderr, "crashing; %s was %s\n", v, os.Getenv(v))
			}
			os.Exit(7)
		}
		return sdk.Continue(), nil
	}
	if hasPrio {
		n, err := strconv.Atoi(prio)
		if err != nil {
			panic(err)
		}
		p.InterceptWithPriority(point, n, h)
		return
	}
	p.Intercept(point, h)
}
