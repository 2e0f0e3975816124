package process

// ReaperName is the argv[0] of the reaper process (see package sidecar's
// documentation), by which tools and tests can recognise it among a host's
// children.
const ReaperName = "extkernel-reaper"

// reaperEnv is the environment variable, set to reaperMode, that makes a
// process started from the host's executable run as the reaper.
const (
	reaperEnv  = "EXTKERNEL_REAPER"
	reaperMode = "v1"
)
