package builder

import (
	"sync"

	"github.com/extkernel/extkernel/contribution"
	"github.com/extkernel/extkernel/generation"
	"github.com/extkernel/extkernel/pluginpkg"
	"github.com/extkernel/extkernel/protocol"
)

// maxMemoManifests bounds declMemo: past it, the memo starts again empty
// (as pluginpkg's manifest cache does).
const maxMemoManifests = 4096

// declMemo remembers, per parsed manifest, what a lazy member is published
// from: the declarations manifestDeclarations derives from it and their
// contributions. pluginpkg's loader hands out the same *Manifest while the
// file is unchanged (and a new one once it changed), and a manifest is
// never modified once parsed, so a host publishes its lazy members from
// the same values at every build instead of deriving them again. The
// values are shared: nothing may modify them.
var declMemo struct {
	sync.Mutex
	by map[*pluginpkg.Manifest]*derived
}

// derived is what declMemo holds for one manifest.
type derived struct {
	decl     *protocol.InitializeResult // manifestDeclarations
	once     sync.Once
	contribs []contribution.Contribution // generation.Contributions of decl, once asked for
}

// declaredOf returns what p's manifest declares (manifestDeclarations),
// nil when it declares nothing, from declMemo when it was derived before.
func declaredOf(p *pluginpkg.Package) *derived {
	if p.Manifest.Name != p.Name {
		if d := manifestDeclarations(p); d != nil {
			return &derived{decl: d}
		}
		return nil
	}
	declMemo.Lock()
	dv, ok := declMemo.by[p.Manifest]
	declMemo.Unlock()
	if ok {
		return dv
	}
	if d := manifestDeclarations(p); d != nil {
		dv = &derived{decl: d}
	}
	declMemo.Lock()
	defer declMemo.Unlock()
	if prev, ok := declMemo.by[p.Manifest]; ok {
		return prev
	}
	if declMemo.by == nil || len(declMemo.by) >= maxMemoManifests {
		declMemo.by = map[*pluginpkg.Manifest]*derived{}
	}
	declMemo.by[p.Manifest] = dv
	return dv
}

// contributions returns m's contributions published from dv.decl
// (generation.Contributions), derived once.
func (dv *derived) contributions(m *generation.Member) []contribution.Contribution {
	dv.once.Do(func() { dv.contribs = generation.Contributions(m, dv.decl) })
	return dv.contribs
}
