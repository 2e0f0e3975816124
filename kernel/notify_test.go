package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/sidecar"
)

// notifyEvents subscribes to k's EventNotify events. The channel is large
// enough that a plugin's read goroutine never waits on it in these tests.
func notifyEvents(t *testing.T, k *Kernel) <-chan observe.Event {
	t.Helper()
	return eventsOfType(t, k, observe.EventNotify)
}

// eventsOfType delivers k's events of type typ on a buffered channel
// until the test ends.
func eventsOfType(t *testing.T, k *Kernel, typ observe.EventType) <-chan observe.Event {
	t.Helper()
	ch := make(chan observe.Event, 64)
	unsub := k.Subscribe(func(e observe.Event) {
		if e.Type == typ {
			ch <- e
		}
	})
	t.Cleanup(unsub) // before the kernel's Close, registered earlier
	return ch
}

// nextEvent waits for the next event on ch.
func nextEvent(t *testing.T, ch <-chan observe.Event) observe.Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no notify event within 10s")
		return observe.Event{}
	}
}

// TestNotifyReachesHost calls a provider that makes its plugin send notify:
// the host gets an EventNotify with the plugin, the event name, the data as
// sent, the current generation and the time it was read.
func TestNotifyReachesHost(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		wantData string
	}{
		{"object", `{"files":3,"done":true}`, `{"files":3,"done":true}`},
		{"string", `"index ready"`, `"index ready"`},
		{"absent input (the SDK sends null data)", ``, `null`},
	}
	k := startKernel(t, testConfig(writeHome(t, plug{name: "notifier", env: map[string]string{"SCRIPT_NOTIFY": "ping"}})))
	events := notifyEvents(t, k)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now()
			if _, err := k.CallProvider(context.Background(), "plugin/notifier/ping", json.RawMessage(tt.input)); err != nil {
				t.Fatal(err)
			}
			e := nextEvent(t, events)
			if e.Plugin != "notifier" || e.Name != "called" || string(e.Data) != tt.wantData || e.Generation != 1 {
				t.Errorf("event = %+v (data %s); want plugin notifier, name called, data %s, generation 1", e, e.Data, tt.wantData)
			}
			if e.Time.Before(before) || e.Time.After(time.Now()) {
				t.Errorf("event time %v is not between the call's start %v and now", e.Time, before)
			}
		})
	}
}

// TestEventsCarryTime checks that every event the kernel emits has its
// time set.
func TestEventsCarryTime(t *testing.T) {
	cfg := testConfig(writeHome(t, plug{name: "alpha"}))
	k, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var events []observe.Event
	unsub := k.Subscribe(func(e observe.Event) { events = append(events, e) })
	if err := k.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	unsub()
	if err := k.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		t.Fatal("Start emitted no events")
	}
	for _, e := range events {
		if e.Time.IsZero() {
			t.Errorf("event %+v has no time", e)
		}
	}
}

// TestNotifyFromReplacedProcess replaces a plugin's process by a reload
// while the old one is still in a call, then makes the old one notify: the
// event is delivered but not attributed to the current generation.
func TestNotifyFromReplacedProcess(t *testing.T) {
	p := plug{name: "notifier", env: map[string]string{"SCRIPT_NOTIFY": "ping"}}
	home := writeHome(t, p)
	k := startKernel(t, testConfig(home))
	events := notifyEvents(t, k)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := k.CallProvider(ctx, "plugin/notifier/ping", json.RawMessage(`"block"`))
		done <- err
	}()
	if e := nextEvent(t, events); e.Name != "called" || e.Generation != 1 {
		t.Fatalf("first event = %+v, want called in generation 1", e)
	}
	p.version = "1.0.1"
	rewrite(t, home, p)
	res, err := k.Reload(context.Background())
	if err != nil || !res.Published || res.Generation.Number() != 2 {
		t.Fatalf("Reload: %v, %+v; want generation 2 published", err, res)
	}
	cancel() // the old process notifies "cancelled" from retired generation 1
	if e := nextEvent(t, events); e.Name != "cancelled" || e.Plugin != "notifier" || e.Generation != 0 {
		t.Errorf("event from the replaced process = %+v, want cancelled with generation 0", e)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("blocked call: %v, want context.Canceled", err)
	}
	if _, err := k.CallProvider(context.Background(), "plugin/notifier/ping", nil); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, events); e.Name != "called" || e.Generation != 2 {
		t.Errorf("event from the new process = %+v, want called in generation 2", e)
	}
}

// TestNotifyAttribution hands the kernel notifies as they come from a
// client: only the plugin's client in the current generation is attributed
// to it, and what the kernel logs about a notify goes through redaction
// while the event keeps what the client handed it (the client has
// redacted the event name already: sidecar.TestNotifyNameRedacted; the
// data is the host's).
func TestNotifyAttribution(t *testing.T) {
	const secret = "n0t1fy-s3cr3t"
	home := writeHome(t, plug{name: "notifier"}, plug{name: "ghost"})
	cfg := testConfig(home)
	var logs syncBuffer
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace})
	cfg.PluginEnv = map[string]map[string]config.EnvVar{"notifier": {"TOKEN": {Value: secret, Secret: true}}}
	k := startKernel(t, cfg)
	// A process replaced by a restart, and one of a plugin a reload
	// removed: neither is in the current generation (3).
	replaced, ghost := clientNamed(k, "notifier"), clientNamed(k, "ghost")
	if err := k.RestartPlugin(context.Background(), "notifier"); err != nil {
		t.Fatal(err)
	}
	disablePackage(t, home, "ghost")
	if _, err := k.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	events := notifyEvents(t, k)
	tests := []struct {
		name     string
		client   *sidecar.Client
		wantGen  uint64
		wantLogs bool
	}{
		{"current client", clientNamed(k, "notifier"), 3, false},
		{"replaced client", replaced, 0, true},
		{"removed plugin", ghost, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(logs.String())
			k.notified(tt.client, "leak "+secret, json.RawMessage(`"`+secret+`"`))
			e := nextEvent(t, events)
			if e.Generation != tt.wantGen || e.Name != "leak "+secret || string(e.Data) != `"`+secret+`"` {
				t.Errorf("event = %+v (data %s); want generation %d with the plugin's text", e, e.Data, tt.wantGen)
			}
			logged := logs.String()[before:]
			if strings.Contains(logged, secret) {
				t.Errorf("the secret was logged:\n%s", logged)
			}
			if got := strings.Contains(logged, "leak "+redactedText); got != tt.wantLogs {
				t.Errorf("logged the redacted event name: %v, want %v; logs:\n%s", got, tt.wantLogs, logged)
			}
		})
	}
}
