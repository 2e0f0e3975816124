package capability_test

import (
	"errors"
	"fmt"

	"github.com/Masterminds/semver/v3"

	"github.com/extkernel/extkernel/capability"
)

func ExampleResolve() {
	closure, err := capability.Resolve(capability.Request{
		Packages: []capability.Package{
			{
				Name: "app", Version: semver.MustParse("1.0.0"), Enabled: true,
				Requires: []capability.Requirement{
					{Key: "storage.kv", Constraint: mustConstraint("^1.2")},
					{Key: "log.sink", Constraint: mustConstraint("^1")},
					{Key: "metrics.sink", Constraint: mustConstraint("^1"), Optional: true},
				},
			},
			{
				Name: "kvstore", Version: semver.MustParse("1.4.0"), Enabled: true,
				Provides: []capability.Provided{{Key: "storage.kv", Version: semver.MustParse("1.4.0")}},
			},
			{
				Name: "kvlite", Version: semver.MustParse("1.2.0"), Enabled: true,
				Provides: []capability.Provided{{Key: "storage.kv", Version: semver.MustParse("1.2.0")}},
			},
		},
		Host:  []capability.Provided{{Key: "log.sink", Version: semver.MustParse("1.0.0")}},
		Roots: []string{"app"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("members:", closure.Members)
	for _, c := range closure.Choices {
		fmt.Printf("%s needs %s %s: %s %s (of %d)\n",
			c.Package, c.Requirement.Key, c.Requirement.Constraint, c.Provider, c.Version, c.Candidates)
	}
	for _, p := range closure.Problems {
		fmt.Printf("%s: %s\n", p.Severity, p.Message)
	}
	fmt.Println("err:", closure.Err())
	// Output:
	// members: [app kvstore]
	// app needs log.sink ^1: (host) 1.0.0 (of 1)
	// app needs storage.kv ^1.2: kvstore 1.4.0 (of 2)
	// warning: package "app" optionally requires metrics.sink ^1: no installed package provides metrics.sink; app runs without it
	// err: <nil>
}

func ExampleClosure_Err() {
	closure, _ := capability.Resolve(capability.Request{
		Packages: []capability.Package{
			{
				Name: "app", Version: semver.MustParse("1.0.0"), Enabled: true,
				Requires: []capability.Requirement{{Key: "storage.kv", Constraint: mustConstraint("^2.0")}},
			},
			{
				Name: "kvstore-next", Version: semver.MustParse("2.1.0"), Enabled: false,
				Provides: []capability.Provided{{Key: "storage.kv", Version: semver.MustParse("2.1.0")}},
			},
		},
	})
	var rerr *capability.ResolveError
	if errors.As(closure.Err(), &rerr) {
		for _, p := range rerr.Problems {
			fmt.Printf("%s (%s)\n", p.Message, p.Kind)
		}
	}
	// Output:
	// package "app" requires storage.kv ^2.0: package kvstore-next 2.1.0 provides storage.kv 2.1.0 but is disabled; enable it with: kernelctl enable kvstore-next (provider-disabled)
}

func mustConstraint(s string) *semver.Constraints {
	c, err := semver.NewConstraint(s)
	if err != nil {
		panic(err)
	}
	return c
}
