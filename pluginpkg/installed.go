package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/extkernel/extkernel/internal/homefile"
	"github.com/extkernel/extkernel/internal/parallel"
	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// PackagesDir is the directory under a home that holds one directory per
// installed package.
const PackagesDir = "packages"

// LoadInstalled reads every package installed in home and its state.
//
// Packages are returned in name order, enabled or not. A package that cannot
// be loaded is left out with Warnings saying why; one broken package never
// stops the others. Warnings are sorted by package (stable, so the problems
// of one manifest stay in document order):
//
//   - an entry under packages/ that is not a directory (or a symbolic link
//     to one), or a broken symbolic link;
//   - a directory without a readable plugin.json;
//   - an invalid manifest: one Warning per problem, Err the *ValidationError;
//   - a manifest whose name differs from its directory name;
//   - a state entry for a package that is not installed.
//
// Entries whose names start with "." are ignored (Install stages in them).
// Two packages can never share a name: a package loads only when its
// manifest name equals its directory name.
//
// The error is non-nil only when home itself cannot be read (it wraps
// fs.ErrNotExist when home does not exist) or when the state file is
// corrupt (a *StateError). A missing packages/ directory is an empty home;
// a missing state.json means every package is enabled and unpinned.
func LoadInstalled(home string) (*Installed, error) {
	return loadInstalled(home, nil)
}

// loadInstalled is LoadInstalled with an optional manifest cache.
func loadInstalled(home string, cache *Loader) (*Installed, error) {
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(home); err != nil {
		return nil, fmt.Errorf("load home: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("load home: %s is not a directory", home)
	}
	st, err := readState(home)
	if err != nil {
		return nil, err
	}
	entries, realPkgs, err := listPackages(filepath.Join(home, PackagesDir), cache)
	if err != nil {
		return nil, fmt.Errorf("load home %s: %w", home, err)
	}
	inst := &Installed{Home: home}
	opt := loadOpts{cache: cache, realPkgs: realPkgs}
	if cache != nil && realPkgs != "" {
		if d, err := pkgfiles.OpenDir(realPkgs); err == nil { // else each manifest is stat'ed by its path
			defer d.Close()
			opt.pkgs = d
		}
	}
	// Packages load several at once (each is a few file-system calls and a
	// parse), those unchanged since the Loader's last look first and one
	// after the other; results are taken in directory order.
	visible := make([]listedEntry, 0, len(entries))
	for _, e := range entries {
		if !strings.HasPrefix(e.name, ".") {
			visible = append(visible, e)
		}
	}
	results := make([]loaded, len(visible))
	known := make([]pkgfiles.Stat, len(visible))
	rest := opt.fromCacheInOrder(visible, results, known)
	parallel.For(len(rest), parallel.FileWorkers, func(j int) { // loadPackage reports problems as warnings
		i := rest[j]
		o := opt
		o.plainDir, o.known = visible[i].dir, known[i] // a directory, not a symbolic link
		results[i].pkg, results[i].warns = loadPackage(home, visible[i].name, o)
	})
	for _, r := range results {
		for _, w := range r.warns {
			w.Disabled = !st.entry(w.Package).Enabled
			inst.Warnings = append(inst.Warnings, w)
		}
		if pkg := r.pkg; pkg != nil {
			se := st.entry(pkg.Name)
			se.apply(pkg)
			inst.Packages = append(inst.Packages, pkg)
		}
	}
	present := make(map[string]bool, len(st.Packages)) // only a state entry's package is looked up
	for _, e := range visible {
		if _, ok := st.Packages[e.name]; ok {
			present[e.name] = true
		}
	}
	for name := range st.Packages {
		if !present[name] {
			inst.Warnings = append(inst.Warnings, Warning{Package: name, Path: StateFile,
				Message: fmt.Sprintf("entry for package %q, which is not installed; the entry is ignored", name)})
		}
	}
	sort.SliceStable(inst.Warnings, func(i, j int) bool { return inst.Warnings[i].Package < inst.Warnings[j].Package })
	return inst, nil
}

// fromCacheInOrder takes from the Loader's cache, one after the other, the
// packages of visible that are plain directories whose manifest it parsed
// before and is unchanged (a stat and a lookup each), into results; it
// records in known the version of each other manifest it stat'ed, and
// returns the indexes of the packages left to load, which loadInstalled
// loads several at once (their manifests are read and parsed: a host's
// published home costs no goroutine). With no cached manifest at all (a
// new process) it leaves every package to the parallel load.
func (o loadOpts) fromCacheInOrder(visible []listedEntry, results []loaded, known []pkgfiles.Stat) []int {
	rest := make([]int, 0, len(visible))
	if o.cache == nil || o.realPkgs == "" || o.cache.empty() {
		for i := range visible {
			rest = append(rest, i)
		}
		return rest
	}
	for i, e := range visible {
		if e.dir {
			o.plainDir = true
			if results[i].pkg, known[i] = o.fromCacheByName(e.name); results[i].pkg != nil {
				continue
			}
		}
		rest = append(rest, i)
	}
	return rest
}

// fromCacheByName is fromCache for the plain directory name in realPkgs:
// a hit makes no string (the cache holds the package's paths, and its
// key is looked up from a buffer on the stack); a miss leaves the paths
// to loadPackage.
func (o loadOpts) fromCacheByName(name string) (*Package, pkgfiles.Stat) {
	if o.pkgs == nil || !manifestUnderPlain(o.realPkgs, name) {
		_, file := manifestUnder(o.realPkgs, name)
		return o.fromCache(name, file)
	}
	st, err := o.pkgs.StatAt(name + "/" + ManifestFile)
	if err != nil {
		return nil, pkgfiles.Stat{}
	}
	var buf [256]byte
	key := append(append(append(append(buf[:0], o.realPkgs...), '/'), name...), "/"+ManifestFile...)
	if c, ok := o.cache.lookupKey(key, st); ok {
		return c.packageFor(name), st // nil for another name of a directory: loadPackage says why
	}
	return nil, st
}

// loaded is what loading one package gave: the package, or nil and the
// warnings explaining why not.
type loaded struct {
	pkg   *Package
	warns []Warning
}

// loadOpts speeds up loadPackage during a whole-home load.
type loadOpts struct {
	cache *Loader
	// realPkgs is home/packages with symbolic links resolved, and plainDir
	// says the entry is a plain directory: then its resolved path is
	// realPkgs/name, without resolving every path component again.
	realPkgs string
	plainDir bool
	// pkgs is realPkgs open, or nil: a plain directory's manifest is
	// stat'ed relative to it (statManifest).
	pkgs *pkgfiles.Dir
	// pkgsDir, when set, is the directory holding the package instead of
	// <home>/packages (a staged or a previous version); messages still
	// name packages/<name>.
	pkgsDir string
	// known, when not zero, is the manifest's version, stat'ed already
	// (fromCacheInOrder): fromCache does not stat it again.
	known pkgfiles.Stat
}

// statManifest returns the version of file, package name's manifest:
// stat'ed relative to the open packages directory when the package is a
// plain directory in it, else by its path.
func (o loadOpts) statManifest(name, file string) (pkgfiles.Stat, error) {
	if o.plainDir && o.pkgs != nil && plainElem(name) {
		return o.pkgs.StatAt(name + "/" + ManifestFile) // short, and kept by nobody: built on the stack
	}
	return pkgfiles.StatPath(file)
}

// fromCache returns package name, its manifest at file, from the Loader's
// cache when the manifest is unchanged (with the paths it was loaded with:
// the same file is the same package directory); else nil and the
// manifest's version (zero when it could not be stat'ed, or there is no
// cache).
func (o loadOpts) fromCache(name, file string) (*Package, pkgfiles.Stat) {
	if o.cache == nil {
		return nil, pkgfiles.Stat{}
	}
	st, err := o.known, error(nil)
	if st == (pkgfiles.Stat{}) {
		st, err = o.statManifest(name, file)
	}
	if err != nil {
		return nil, pkgfiles.Stat{}
	}
	if c, ok := o.cache.lookup(file, st); ok {
		return c.packageFor(name), st
	}
	return nil, st
}

// manifestPaths returns where messages place package name and its
// manifest: packages/<name> and packages/<name>/plugin.json.
func manifestPaths(name string) (rel, mpath string) {
	if !plainElem(name) {
		rel = path.Join(PackagesDir, name)
		return rel, path.Join(rel, ManifestFile)
	}
	mpath = PackagesDir + "/" + name + "/" + ManifestFile
	return mpath[:len(PackagesDir)+1+len(name)], mpath
}

// loadPackage loads packages/<name> of home. It returns the package (state
// not applied) or nil and the warnings explaining why not.
func loadPackage(home, name string, opt loadOpts) (*Package, []Warning) {
	cache := opt.cache
	rel, mpath := manifestPaths(name)
	warn := func(p, msg string, err error) []Warning {
		return []Warning{{Package: name, Path: p, Message: msg, Err: err}}
	}
	var dir, link string
	var err error
	var file string
	if opt.plainDir && opt.realPkgs != "" {
		dir, file = manifestUnder(opt.realPkgs, name)
	} else {
		link = filepath.Join(home, PackagesDir, name)
		if opt.pkgsDir != "" {
			link = filepath.Join(opt.pkgsDir, name)
		}
		dir, err = filepath.EvalSymlinks(link)
	}
	if err != nil {
		if target, lerr := os.Readlink(link); lerr == nil {
			return nil, warn(rel, fmt.Sprintf("broken symbolic link (target %q does not exist)", target), err)
		}
		return nil, warn(rel, "cannot read: "+err.Error(), err)
	}
	if !opt.plainDir {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, warn(rel, "not a package directory; only directories under packages/ are loaded", err)
		}
	}
	if file == "" {
		file = joinElem(dir, ManifestFile)
	}
	p, st := opt.fromCache(name, file)
	if p != nil {
		return p, nil
	}
	readAt := time.Now()
	data, err := readManifest(file)
	var refused *homefile.Error
	switch {
	case errors.As(err, &refused):
		return nil, warn(mpath, "manifest is "+refused.Reason(), err)
	case errors.Is(err, fs.ErrNotExist):
		return nil, warn(mpath, "missing manifest (every package directory needs a "+ManifestFile+")", err)
	case err != nil:
		return nil, warn(mpath, "cannot read manifest: "+err.Error(), err)
	}
	m, err := Parse(mpath, data)
	if err != nil {
		var ve *ValidationError
		errors.As(err, &ve)
		var warns []Warning
		for _, p := range ve.Problems {
			warns = append(warns, Warning{Package: name, Path: mpath, Message: p.String(), Err: err})
		}
		return nil, warns
	}
	if m.Name != name {
		return nil, warn(mpath, fmt.Sprintf("manifest name %q does not match directory name %q; the package is not loaded", m.Name, name), nil)
	}
	if msg := m.Runtime.NoPlatform(); msg != "" {
		return nil, warn(mpath, msg+"; the package is not loaded", nil)
	}
	sha := sha256Hex(data)
	if cache != nil && st.Size == int64(len(data)) {
		cache.store(file, st, readAt, m, sha, dir, mpath)
	}
	return &Package{Name: name, Dir: dir, ManifestPath: mpath, Manifest: m, ManifestSHA256: sha}, nil
}

// joinElem is filepath.Join(dir, elem) for a clean dir: a whole-home load
// joins several paths per package, and Join cleans each one again. An
// elem that is not one plain path element takes Join.
func joinElem(dir, elem string) string {
	if filepath.Separator != '/' || dir == "" || !plainElem(elem) {
		return filepath.Join(dir, elem)
	}
	if dir == "/" {
		return dir + elem
	}
	return dir + "/" + elem
}

// manifestUnder returns joinElem(dir, name) and the manifest path in it,
// one string when it can: a whole-home load makes them for every package.
func manifestUnder(dir, name string) (pkgDir, file string) {
	if !manifestUnderPlain(dir, name) {
		pkgDir = joinElem(dir, name)
		return pkgDir, joinElem(pkgDir, ManifestFile)
	}
	file = dir + "/" + name + "/" + ManifestFile
	return file[:len(dir)+1+len(name)], file
}

// manifestUnderPlain reports whether manifestUnder(dir, name) is
// dir/name/plugin.json, plainly concatenated.
func manifestUnderPlain(dir, name string) bool {
	return filepath.Separator == '/' && dir != "" && dir != "/" && plainElem(name)
}

// plainElem reports whether elem is one plain path element: not empty,
// not "." or "..", no slash.
func plainElem(elem string) bool {
	return elem != "" && elem != "." && elem != ".." && !strings.ContainsRune(elem, '/')
}
