package confine

import (
	"sync"
	"time"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// maxSniffed bounds the sniff cache: past it the cache is emptied.
const maxSniffed = 4096

// sniffCache remembers what sniff found in a file, by path, for as long
// as the file is the same version (pkgfiles.StatOf: size, modification
// and change times, inode): every confined start plans its plugin's
// interpreter chain, and parsing an ELF header costs more than the rest
// of the plan. An entry recorded within pkgfiles.RacyWindow of the
// version's last change is not trusted (a rewrite in the same instant
// could keep the stat), as the file digest cache does.
var sniffCache struct {
	mu      sync.Mutex
	entries map[string]sniffed
}

type sniffed struct {
	st                    pkgfiles.Stat
	at                    time.Time
	interp, arg, elfInter string
}

// sniffCached is sniff, answered from sniffCache when f has not changed
// since.
func sniffCached(f string) (interp, arg, elfInterp string, err error) {
	st, err := pkgfiles.StatPath(f)
	if err != nil {
		return sniff(f)
	}
	sniffCache.mu.Lock()
	e, ok := sniffCache.entries[f]
	sniffCache.mu.Unlock()
	if ok && e.st == st && st.SettledAt(e.at.UnixNano()) {
		return e.interp, e.arg, e.elfInter, nil
	}
	at := time.Now()
	interp, arg, elfInterp, err = sniff(f)
	if err != nil {
		return "", "", "", err
	}
	if after, serr := pkgfiles.StatPath(f); serr == nil && after == st {
		sniffCache.mu.Lock()
		if sniffCache.entries == nil || len(sniffCache.entries) >= maxSniffed {
			sniffCache.entries = map[string]sniffed{}
		}
		sniffCache.entries[f] = sniffed{st: st, at: at, interp: interp, arg: arg, elfInter: elfInterp}
		sniffCache.mu.Unlock()
	}
	return interp, arg, elfInterp, nil
}
