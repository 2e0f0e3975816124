// Command kvstore-next is the demo's next major kvstore, installed but
// disabled in the demo home.
package main

import "github.com/extkernel/extkernel/testdata/demo/kvlib"

func main() { kvlib.Serve("kvstore-next", "2.1.0") }
