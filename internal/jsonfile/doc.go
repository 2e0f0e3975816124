// Package jsonfile is the one reader of the JSON files of extkernel: the
// manifests, the host config (kernel.json), the installed state and the
// generation snapshots. The files themselves are read with the size bound
// of internal/homefile; this package turns their bytes into values and
// every problem into a message with a line and a column.
//
// It offers three ways in, one per kind of format:
//
//   - Parse decodes into a tree of Nodes that keeps document order,
//     duplicate keys, each value's offsets and the first byte of any string
//     literal that is not UTF-8. The manifest validator walks this tree,
//     since it has the strictest rules (duplicate keys and non-UTF-8 text
//     are problems there). It checks the input with json.Valid and then
//     builds the tree in one pass over the bytes (scan.go), decoding only
//     strings with escapes or invalid UTF-8 with encoding/json, so values
//     are what encoding/json makes of them.
//   - Bind fills a tagged struct from a tree, the struct being the schema:
//     keys its json tags do not name are reported as unknown, and values of
//     the wrong JSON type as problems with their line and column, all at
//     once. kernel.json is read this way.
//   - Unmarshal decodes one value with encoding/json and locates its error
//     (syntax, type, truncated input, data after the value). The state file
//     (strict: unknown fields are errors) and snapshots (lenient) use it.
//
// Lines and columns are 1-based; columns count runes, as editors do.
// Duplicate keys are reported by Parse and left to the format: manifests
// refuse them; Bind and Unmarshal keep the last, as encoding/json does.
package jsonfile
