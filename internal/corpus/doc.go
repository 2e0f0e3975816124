// Package corpus has no code, only the tests of the frozen plugin corpus,
// testdata/corpus at the module's root (docs/compatibility.md, section 1):
//
//   - TestCorpus runs the conformance suite (package sdktest) against the
//     current kernel on every plugin of testdata/corpus/<version>/, at
//     least 12 per released protocol version, written against that
//     version with its SDKs (Python and Node, copied as they were) or with
//     no SDK (Python, Node, sh, Go); Go plugins are built by the test,
//     their outputs never kept. Every case must pass, 100%.
//   - TestCurrentSDKWithOldHost goes the other way: plugins of the current
//     Go, Python and Node SDKs with a host that speaks protocol 1.0.0, the
//     oldest one still supported.
package corpus
