package sidecar

import "github.com/extkernel/extkernel/internal/process"

// ReaperName is the argv[0] of the reaper process (see the package
// documentation), by which tools and tests can recognise it among a
// host's children.
const ReaperName = process.ReaperName
