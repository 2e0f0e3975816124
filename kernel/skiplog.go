package kernel

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/sidecar"
)

// skipLog logs the skips of optional interceptors once per state instead
// of once per call: the first skip of a plugin's process (or of the
// plugin while it does not run) is a warning; later skips of the same
// process are logged at debug and counted, and the count is logged when
// the plugin serves a call again. A restart (another process) is a new
// state and warns again. A host dispatching thousands of calls to a
// plugin that is down logs O(1) lines.
type skipLog struct {
	active atomic.Int32 // how many plugins are in skipping
	mu     sync.Mutex
	// skipping maps each plugin whose last call was skipped to its state.
	skipping map[string]*skipState
}

// skipState is one plugin's run of skipped calls.
type skipState struct {
	client uint64 // the process the skips were on; 0 when none ran
	count  int    // skips since the warning, the warned one included
}

// skipped logs an optional interceptor's failed call to plugin, whose
// process is client (nil when none runs).
func (s *skipLog) skipped(log hclog.Logger, plugin string, client *sidecar.Client, point contribution.Point, err error) {
	var id uint64
	if client != nil {
		id = client.ID()
	}
	s.mu.Lock()
	st := s.skipping[plugin]
	first := st == nil || st.client != id
	if st == nil {
		if s.skipping == nil {
			s.skipping = map[string]*skipState{}
		}
		st = &skipState{}
		s.skipping[plugin] = st
		s.active.Add(1)
	}
	if first {
		st.client, st.count = id, 0
	}
	st.count++
	s.mu.Unlock()
	if first {
		log.Warn("optional interceptor skipped; further skips are logged when it serves again", "plugin", plugin, "point", point, "error", err)
		return
	}
	log.Debug("optional interceptor skipped", "plugin", plugin, "point", point, "error", err)
}

// served records a call the plugin answered, ending its run of skips.
// Without any plugin skipping it costs one atomic load.
func (s *skipLog) served(log hclog.Logger, plugin string) {
	if s.active.Load() == 0 {
		return
	}
	s.mu.Lock()
	st := s.skipping[plugin]
	if st != nil {
		delete(s.skipping, plugin)
		s.active.Add(-1)
	}
	s.mu.Unlock()
	if st != nil {
		log.Info("optional interceptor serves again", "plugin", plugin, "skipped_calls", st.count)
	}
}
