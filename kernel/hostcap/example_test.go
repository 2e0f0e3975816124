package hostcap_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
	"github.com/extkernel/extkernel/kernel"
	"github.com/extkernel/extkernel/kernel/config"
	"github.com/extkernel/extkernel/kernel/hostcap"
	"github.com/extkernel/extkernel/kernel/observe"
	"github.com/extkernel/extkernel/pluginpkg"
)

// A host that confines its plugins gives them read access to its docs and
// fetches from one API on their behalf: it declares both capabilities,
// registers their handlers, and logs what they audit. Plugins that list
// host.fs.read or host.net.fetch in their manifest's requires may call
// them.
func Example() {
	docs := filepath.Join(os.TempDir(), "hostcap-example-docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(docs)
	read, err := hostcap.NewFSRead(hostcap.FSReadConfig{Roots: []string{docs}})
	if err != nil {
		log.Fatal(err)
	}
	fetch, err := hostcap.NewNetFetch(hostcap.NetFetchConfig{Allow: []string{"https://api.example.com/v1/"}})
	if err != nil {
		log.Fatal(err)
	}
	cfg := config.Config{
		Home:        filepath.Join(os.TempDir(), "hostcap-example-home"),
		Confinement: config.Confinement{Default: pluginpkg.ConfineRequire},
		Capabilities: []capability.Provided{
			{Key: hostcap.FSRead, Version: semver.MustParse("1.0.0")},
			{Key: hostcap.NetFetch, Version: semver.MustParse("1.0.0")},
		},
		Handlers: map[capability.Key]capability.Handler{hostcap.FSRead: read, hostcap.NetFetch: fetch},
	}
	k, err := kernel.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close(context.Background())
	k.Subscribe(func(e observe.Event) {
		if e.Type == observe.EventAudit { // "reader host.fs.read.read /srv/docs/x: denied ..."
			log.Printf("%s %s.%s %s: %s %v", e.Plugin, e.Capability, e.Method, e.Target, e.State, e.Err)
		}
	})
	// k.Start(ctx) starts the plugins, confined.
	fmt.Println(len(cfg.Handlers), "host capabilities")
	// Output: 2 host capabilities
}
