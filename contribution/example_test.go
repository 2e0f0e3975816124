package contribution_test

import (
	"errors"
	"fmt"

	"github.com/extkernel/extkernel/contribution"
)

func ExampleBuilder() {
	b := contribution.NewBuilder(contribution.HostSpec{
		Points: []contribution.Point{"tool.before"},
		Slots:  []contribution.Slot{"context.compactor"},
	})
	audit := contribution.PluginSource("audit", "1.2.0", contribution.OriginHandshake)
	guard := contribution.PluginSource("guard", "0.3.1", contribution.OriginManifest)
	memory := contribution.PluginSource("memory", "2.0.0", contribution.OriginHandshake)
	b.Add(
		contribution.NewInterceptor(audit, "tool.before", 0, 0),
		contribution.NewInterceptor(guard, "tool.before", 500, 0),
		contribution.NewInterceptor(contribution.HostSource(), "tool.before", 0, 0),
		contribution.NewStrategy(memory, "context.compactor", 1),
		contribution.NewProvider(memory, contribution.Provider{Ref: "recall"}, 2),
	)
	reg, err := b.Build()
	if err != nil {
		panic(err)
	}
	// Higher priority runs first; ties go by plugin name (the host first).
	for i, c := range reg.Interceptors("tool.before") {
		fmt.Printf("%d. %s priority %d\n", i+1, c.Source, c.Priority)
	}
	owner, _ := reg.SlotOwner("context.compactor")
	fmt.Println("compactor:", owner.Source)
	_, ok := reg.Provider(contribution.ProviderID("memory", "recall"))
	fmt.Println("provider plugin/memory/recall:", ok)
	// Output:
	// 1. "guard" (manifest) priority 500
	// 2. the host priority 0
	// 3. "audit" (handshake) priority 0
	// compactor: "memory" (handshake)
	// provider plugin/memory/recall: true
}

func ExampleRegistryError() {
	b := contribution.NewBuilder(contribution.HostSpec{
		Slots: []contribution.Slot{"context.compactor"},
	})
	b.Add(
		contribution.NewStrategy(contribution.PluginSource("summarizer", "1.0.0", contribution.OriginHandshake), "context.compactor", 0),
		contribution.NewStrategy(contribution.PluginSource("memory", "1.0.0", contribution.OriginHandshake), "context.compactor", 0),
		contribution.NewInterceptor(contribution.PluginSource("audit", "1.0.0", contribution.OriginHandshake), "tool.before", 0, 0),
	)
	_, err := b.Build()
	var be *contribution.RegistryError
	if errors.As(err, &be) {
		for _, p := range be.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// error: slot "context.compactor" is claimed by both "memory" (handshake) and "summarizer" (handshake); name its owner in the host config's slot_owners
	// warning: "audit" (handshake) contributes interceptor to point "tool.before", which the host does not declare; it is ignored (declared points: none)
}

func ExampleHostSpec_slotOwners() {
	b := contribution.NewBuilder(contribution.HostSpec{
		Slots:      []contribution.Slot{"context.compactor"},
		SlotOwners: map[contribution.Slot]string{"context.compactor": "memory"},
	})
	b.Add(
		contribution.NewStrategy(contribution.PluginSource("summarizer", "1.0.0", contribution.OriginHandshake), "context.compactor", 0),
		contribution.NewStrategy(contribution.PluginSource("memory", "1.0.0", contribution.OriginHandshake), "context.compactor", 0),
	)
	reg, err := b.Build()
	if err != nil {
		panic(err)
	}
	owner, _ := reg.SlotOwner("context.compactor")
	fmt.Println("owner:", owner.Source)
	for _, c := range reg.Overridden() {
		fmt.Println("overridden:", c.Source)
	}
	// Output:
	// owner: "memory" (handshake)
	// overridden: "summarizer" (handshake)
}
