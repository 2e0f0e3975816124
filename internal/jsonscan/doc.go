// Package jsonscan is extkernel's fast JSON path: a validating scanner, a
// one-pass decoder of flat objects, a compactor and a string encoder, each
// written to agree byte for byte with encoding/json or to refuse.
//
// Every call frame is decoded twice (the envelope, then its params or
// result), and encoding/json scans each input twice (a validity pass, then
// the decoding pass, with reflection). The decoder here handles the shapes
// that make up nearly all traffic in one pass with no reflection: an
// object whose members are all known, with exactly spelled keys, no
// duplicate, no null value and no escape in the strings it decodes.
// Anything else (including any invalid input) is refused, and the caller
// decodes it with encoding/json, so the result, and the error, are always
// encoding/json's. A hand-written scanner rather than a library: the fast
// path needs only these flat objects, the drop-in replacements
// (goccy/go-json, segmentio/encoding) would change decoding for every
// message and add a dependency to every plugin built on the SDK, and the
// tokenizers (jsonparser, gjson) do not validate what they skip.
//
// The package knows nothing of the protocol: package internal/wire uses it
// for the envelope and for params and results. The day
// encoding/json/v2 is the default and within about 1.3x of this path on
// the benchmarks of internal/wire, this package can be deleted.
//
// # Invariants
//
//  1. The scanner MUST never accept input encoding/json refuses; it may
//     refuse valid input (nesting deeper than MaxDepth). FuzzScan checks it.
//  2. DecodeFields, DecodeList and DecodeStringMap MUST, when they report
//     success, have written what json.Unmarshal would into a zero value.
//     internal/wire's FuzzFastDecode checks them on the protocol's types.
//  3. AppendString MUST append exactly json.Marshal's encoding of a
//     string; AppendCompact exactly json.Compact's output. FuzzAppendString
//     and FuzzScan check them.
//
// # Concurrency
//
// Every function is safe for concurrent use; none keeps state.
package jsonscan
