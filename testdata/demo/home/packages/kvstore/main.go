// Command kvstore is a demo plugin: an in-memory key-value store offered to
// other plugins as the storage.kv capability.
package main

import "github.com/extkernel/extkernel/testdata/demo/kvlib"

func main() { kvlib.Serve("kvstore", "1.4.0") }
