package pluginpkg

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// LockFile is the name of the lock file in a home that serializes state
// writers across processes.
const LockFile = ".state.lock"

// homeMutexes holds one mutex per home (keyed by cleaned absolute path), the
// in-process half of the home lock.
var homeMutexes sync.Map // string -> *sync.Mutex

// lockHome takes the home lock: first the in-process mutex for home, then an
// exclusive flock on <home>/.state.lock. Lock order: mutex, then flock. The
// returned func releases both. home must exist and be absolute.
func lockHome(home string) (unlock func(), err error) {
	mu, _ := homeMutexes.LoadOrStore(home, new(sync.Mutex))
	mu.(*sync.Mutex).Lock()
	f, err := os.OpenFile(filepath.Join(home, LockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err == nil {
		if err = flockFile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		mu.(*sync.Mutex).Unlock()
		return nil, fmt.Errorf("lock home %s: %w", home, err)
	}
	return func() {
		funlockFile(f)
		f.Close()
		mu.(*sync.Mutex).Unlock()
	}, nil
}
