package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/extkernel/extkernel/protocol"
	"github.com/extkernel/extkernel/sdk"
)

// floodEvery is the mean pause between two floods of SCRIPT_FLOODS.
const floodEvery = 400 * time.Millisecond

// startFloods returns the initialize hook that starts the SCRIPT_FLOODS
// floods: once the handshake is done (the notify "floods" went out), after
// every floodEvery or so (half to one and a half of it), one of them at
// random, recorded in SCRIPT_LOG as "flood <kind> <messages>" before it
// is sent. The kinds are notify (100 to 300 notify notifications),
// garbage (10 to 60 malformed messages, and one time in ten 150, past the
// host's limit of 100, which stops the plugin), stderr (2000 to 4000
// lines), log (500 to 1000 log notifications at warn), 40 and 10 times
// at least the 50 lines a second the host logs for a plugin, and wide (2
// lines of hundreds of KiB: a log notification, an hclog JSON line on
// stderr).
func startFloods(p *sdk.Plugin, kinds []string) func(protocol.InitializeParams) {
	return func(protocol.InitializeParams) {
		go func() {
			for started := false; !started; {
				// Before initialize is answered, a raw message would
				// break the protocol: Notify refuses until then.
				time.Sleep(10 * time.Millisecond)
				started = p.Notify("floods", nil) == nil
			}
			for {
				time.Sleep(floodEvery/2 + rand.N(floodEvery))
				kind := kinds[rand.IntN(len(kinds))]
				n := floodSize(kind)
				record(fmt.Sprintf("flood %s %d", kind, n))
				flood(p, kind, n)
			}
		}()
	}
}

// floodSize returns how many messages or lines a flood of kind sends, at
// random.
func floodSize(kind string) int {
	switch kind {
	case "notify":
		return 100 + rand.IntN(201)
	case "garbage":
		if rand.IntN(10) == 0 {
			return 150
		}
		return 10 + rand.IntN(51)
	case "stderr":
		return 2000 + rand.IntN(2001)
	case "log":
		return 500 + rand.IntN(501)
	case "wide":
		return 2
	}
	panic("scripted: no flood " + kind)
}

// flood sends a flood of n messages or lines of kind.
func flood(p *sdk.Plugin, kind string, n int) {
	if kind == "wide" {
		wide := strings.Repeat("w", 256<<10)
		_, _ = fmt.Fprintf(stdout, `{"jsonrpc":"2.0","method":"log","params":{"level":"warn","message":"wide %s"}}`+"\n", wide)
		fmt.Fprintf(os.Stderr, `{"@level":"warn","@message":"wide","wide":%q}`+"\n", wide[:128<<10])
		return
	}
	for i := range n {
		switch kind {
		case "notify":
			_ = p.Notify("flood", i)
		case "garbage":
			_, _ = stdout.Write(garbage(i))
		case "stderr":
			fmt.Fprintf(os.Stderr, "flood %d %s\n", i, strings.Repeat("e", 80))
		case "log":
			_, _ = fmt.Fprintf(stdout, `{"jsonrpc":"2.0","method":"log","params":{"level":"warn","message":"flood %d %s"}}`+"\n",
				i, strings.Repeat("l", 80))
		}
	}
}

// garbage returns the i-th malformed message, a line: well-framed
// JSON-RPC whose params do not decode, or whose id the host never sent,
// each of which the host drops with a warning and counts.
func garbage(i int) []byte {
	var m string
	switch i % 5 {
	case 0:
		m = `{"jsonrpc":"2.0","method":"log","params":["not","an","object"]}`
	case 1:
		m = `{"jsonrpc":"2.0","method":"notify","params":{"event":42}}`
	case 2:
		m = `{"jsonrpc":"2.0","method":"$/cancel","params":["everything"]}`
	case 3:
		m = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":null}`, 1_000_000_000+i)
	default:
		m = `{"jsonrpc":"2.0","method":"$/stream/ack","params":{"id":[],"seq":"one"}}`
	}
	return []byte(m + "\n")
}
