package sdktest_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"github.com/extkernel/extkernel/sdk/sdktest"
)

// Run the suite on a package directory (its plugin built) and print each
// case, as `kernelctl conformance` does.
func ExampleRun() {
	rep, err := sdktest.Run(context.Background(), "testdata/hello", sdktest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range rep.Cases {
		fmt.Printf("%-28s %-4s %s\n", c.Name, c.Status, c.Reason)
	}
	if rep.Failed() {
		fmt.Println("not conformant")
	}
}

// A Go plugin checks itself from its own tests: with the plugin built into
// its package directory (here the test's directory), a plugin_test.go
// holds this one test.
func ExampleCheck() {
	_ = func(t *testing.T) { // func TestConformance(t *testing.T)
		sdktest.Check(t, ".", sdktest.Options{})
	}
}
