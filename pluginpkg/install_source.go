package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/extkernel/extkernel/internal/pkgfiles"
)

// Hidden directories of <home>/packages, which LoadInstalled ignores.
const (
	// StagingDir holds packages being installed, upgraded, rolled back or
	// removed; whatever a killed operation left in it is deleted by the
	// next one.
	StagingDir = ".staging"
	// PreviousDir holds, per package, the version the last upgrade
	// replaced (<home>/packages/.previous/<name>), which Rollback restores.
	PreviousDir = ".previous"
)

// InstallStep names a point of InstallSource's sequence, reported to
// InstallOptions.OnStep when it is reached.
type InstallStep string

// The steps of InstallSource, in order.
const (
	// StepExtracted: the package is written into its staging directory
	// under packages/.staging, its files synced, its directories not yet.
	StepExtracted InstallStep = "extracted"
	// StepSynced: the staged package is synced and loads; nothing the
	// loader reads has changed yet.
	StepSynced InstallStep = "synced"
	// StepMovedAside: an upgrade where directories cannot be exchanged
	// atomically (outside Linux, or a file system without
	// RENAME_EXCHANGE) moved the installed version to
	// packages/.previous/<name>; the new one is not in place, so the
	// package is absent until the next rename.
	StepMovedAside InstallStep = "moved-aside"
	// StepPlaced: the new version is at packages/<name>; the state file is
	// not written yet.
	StepPlaced InstallStep = "placed"
)

// InstallOptions configure InstallSource and PreviewInstall. The zero
// value installs a package of a new name with the default Limits.
type InstallOptions struct {
	// Upgrade lets the install replace an installed package of the same
	// name whose files differ. The replaced version is kept in
	// packages/.previous/<name> (replacing the one kept before) for
	// Rollback. Without it such an install fails with ErrAlreadyInstalled.
	Upgrade bool
	// AcceptPermissions records that the operator accepts what the new
	// manifest asks for (Manifest.RequestedPermissions) as the package's
	// accepted permissions (Package.Accepted). Without it, an upgrade
	// whose manifest asks for more than was accepted fails with a
	// *PermissionsWidenedError; see InstallSource.
	AcceptPermissions bool
	// Limits bound what is read from the source.
	Limits Limits
	// Bake, when set, puts the upgrade on probation (Bake): the state
	// file records it with the version it replaces, for a running kernel
	// to watch. It needs an installed version to replace; an install of
	// the files already installed records none.
	Bake *Bake
	// Origin, when set, is recorded as the package's Origin: the
	// artifact the source was fetched from, by digest
	// ("oci://ghcr.io/acme/hello@sha256:…"); an install without it
	// records none. It MUST end in "@sha256:" and 64 lower-case hex
	// digits, or InstallSource fails before anything is written.
	Origin string
	// ExpectManifest, when set, is the plugin.json the source MUST hold,
	// byte for byte (an artifact's config, which was checked before its
	// archive was fetched); a source holding another is refused with
	// RuleManifest before anything is written.
	ExpectManifest []byte
	// OnStep, when set, is called at each InstallStep reached, on the
	// calling goroutine, with the home lock held: it MUST NOT call this
	// package's functions on the same home. It exists for progress
	// reports and crash tests.
	OnStep func(InstallStep)
}

// InstallResult is what InstallSource did, or what PreviewInstall shows it
// would do.
type InstallResult struct {
	// Package is the package as installed, with its state applied (in a
	// Preview, the copy in the preview home).
	Package *Package
	// Source is the kind of source read.
	Source SourceKind
	// Digest is the FileDigest sum of the package's files, recorded in the
	// state file.
	Digest string
	// Unchanged reports that the package installed under that name already
	// had exactly these files: nothing was replaced, and only the digest
	// was recorded if it was missing.
	Unchanged bool
	// Previous is the package the install replaced, as now kept in
	// packages/.previous (in a Preview, as installed); nil when none was.
	Previous *Package
	// PreviousDigest is Previous's files digest ("" when its files cannot
	// be digested, or without Previous).
	PreviousDigest string
	// Changed lists the files that differ between Previous and Package,
	// were added or were removed: slash-separated, sorted; nil without
	// Previous.
	Changed []string
	// PermissionsAccepted lists what an upgrade with
	// InstallOptions.AcceptPermissions accepted beyond the permissions
	// accepted before (as Permissions.Widening words them); nil otherwise
	// (a first install accepts all its manifest asks for:
	// Package.Accepted).
	PermissionsAccepted []string
}

// InstallSource installs the package at src, a package directory, a
// gzip-compressed tar archive or a zip archive, into home (created as
// needed), and records it enabled with its digest in the state file.
//
// Everything is checked before anything is written: every entry of the
// source against the rules of SourceRule and the bounds of opts.Limits (a
// *SourceError), and the manifest (a *ValidationError). An archive may
// hold the package at its top or inside one top-level directory.
// Interpreter caches and version-control metadata (see FileDigest) are
// not installed; regular files are installed 0644, or 0755 when the source
// has any execute bit set; symbolic links are installed as written, and
// must resolve inside the package.
//
// Then, under the home lock (never the run lock: a running kernel's home
// is installed into, and its next reload picks the package up):
//
//  1. a packages/.staging or packages/.previous that is a symbolic link or
//     not a directory is refused (an error naming it), before anything is
//     deleted or written; leftovers of a killed operation in
//     packages/.staging are deleted;
//  2. the package is extracted into packages/.staging, synced, and must
//     load;
//  3. when a package of that name is installed with exactly these files,
//     nothing is replaced (Unchanged); when it differs, opts.Upgrade is
//     required, else the error wraps ErrAlreadyInstalled;
//  4. the new version is renamed into packages/<name> (on Linux an upgrade
//     exchanges the two directories atomically), the replaced one moved
//     to packages/.previous/<name>;
//  5. the state entry is written: a new package enabled and unpinned; an
//     upgraded one keeps its enabled flag and its pin (a pinned package
//     does not start until it is pinned again). If this fails, step 4 is
//     undone.
//
// Consent (docs/security.md, "Consent"): a first install records what the
// manifest asks for as accepted (Package.Accepted), as does any install
// with opts.AcceptPermissions. An upgrade whose new manifest asks for
// more than was accepted (Permissions.Widening) fails with a
// *PermissionsWidenedError before step 4, without it; one that asks for
// the same or less keeps the accepted permissions as they were. A
// package with no acceptance recorded counts as having accepted what its
// installed manifest asks for (the minimal set when that manifest does
// not load), which the upgrade records.
//
// A crash or a full disk at any point leaves either the old package or the
// new one whole, never a mix; only in an upgrade without an atomic
// exchange is there a moment (StepMovedAside) when the package is absent.
// Running the same install again then completes it. An error from OnStep's
// steps leaves the home as it was.
func InstallSource(home, src string, opts InstallOptions) (*InstallResult, error) {
	home, s, err := checkedSource(home, src, opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(home, PackagesDir), 0o755); err != nil {
		return nil, fmt.Errorf("install %s: %w", s.manifest.Name, err)
	}
	unlock, err := lockHome(home)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := cleanLeftoversLocked(home); err != nil {
		return nil, err
	}
	in := &installer{home: home, src: s, opts: opts, name: s.manifest.Name}
	return in.run()
}

// checkHome refuses a directory source that holds the home's packages.
func (s *source) checkHome(home string) error {
	if s.kind != SourceDir {
		return nil
	}
	if real, err := filepath.EvalSymlinks(filepath.Join(home, PackagesDir)); err == nil && within(s.abs, real) {
		return fmt.Errorf("install %s: source %s contains the home's packages directory", s.manifest.Name, s.given)
	}
	return nil
}

// precheck refuses, before anything is written, an install without
// Upgrade over an installed package whose manifest differs from the
// source's (files that differ with the same manifest are found once
// staged).
func precheck(home string, s *source, opts InstallOptions) error {
	if opts.Upgrade {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(home, PackagesDir, s.manifest.Name)); err != nil {
		return nil
	}
	cur, _ := loadPackage(home, s.manifest.Name, loadOpts{})
	if cur == nil || cur.ManifestSHA256 != s.manifestSHA256 {
		return alreadyInstalled(home, cur, s.manifest)
	}
	return nil
}

// alreadyInstalled is the ErrAlreadyInstalled error of an install over cur
// (nil when the installed directory does not load) of a package m.
func alreadyInstalled(home string, cur *Package, m *Manifest) error {
	what := "a package directory that does not load"
	if cur != nil {
		what = "version " + cur.Manifest.Version.String()
	}
	return fmt.Errorf("package %q in %s: %w: %s is installed, and the source (version %s) holds other files",
		m.Name, home, ErrAlreadyInstalled, what, m.Version)
}

// installer is one InstallSource with the home lock held.
type installer struct {
	home string
	src  *source
	opts InstallOptions
	name string
	// dest is packages/<name>, stage the staging directory, staged the
	// package in it.
	dest, stage, staged string
	// exists says packages/<name> exists; cur is it loaded (nil when it
	// does not load), curDigest its files digest.
	exists    bool
	cur       *Package
	curDigest *FileDigest
	// dropped says the version kept in packages/.previous before was moved
	// into the staging directory; exchanged that place swapped the
	// directories atomically.
	dropped, exchanged bool
	// accepted is the accepted permissions the state entry records, added
	// what opts.AcceptPermissions accepted beyond those before (consent).
	accepted *Permissions
	added    []string
}

func (in *installer) step(s InstallStep) {
	if in.opts.OnStep != nil {
		in.opts.OnStep(s)
	}
}

func (in *installer) run() (*InstallResult, error) {
	st, err := readState(in.home)
	if err != nil {
		return nil, err
	}
	in.dest = filepath.Join(in.home, PackagesDir, in.name)
	in.inspect()
	if in.exists && !in.opts.Upgrade && (in.cur == nil || in.cur.ManifestSHA256 != in.src.manifestSHA256) {
		return nil, alreadyInstalled(in.home, in.cur, in.src.manifest)
	}
	if err := in.checkBake(); err != nil {
		return nil, err
	}
	// A manifest other than the installed one is checked for consent
	// before anything is written; the installed manifest itself only once
	// its files are known to differ (it may ask for more than was
	// accepted, after a rollback).
	early := in.cur == nil || in.cur.ManifestSHA256 != in.src.manifestSHA256
	if early {
		if err := in.consent(st); err != nil {
			return nil, err
		}
	}
	if in.stage, err = makeStage(in.home, in.name); err != nil {
		return nil, err
	}
	defer dropStage(in.stage) // after a successful install, it holds what was dropped
	in.staged = filepath.Join(in.stage, in.name)
	digest, err := in.prepare()
	if err != nil {
		return nil, err
	}
	res := &InstallResult{Source: in.src.kind, Digest: digest.Sum}
	if in.exists && in.curDigest != nil && in.curDigest.Sum == digest.Sum {
		return in.keep(st, res)
	}
	if in.exists && !in.opts.Upgrade {
		return nil, alreadyInstalled(in.home, in.cur, in.src.manifest)
	}
	if !early {
		if err := in.consent(st); err != nil {
			return nil, err
		}
	}
	if err := in.place(); err != nil {
		return nil, err
	}
	st.Packages[in.name] = in.entry(st, digest.Sum)
	if err := writeStateLocked(in.home, st); err != nil {
		return nil, errors.Join(fmt.Errorf("install %s: %w", in.name, err), in.unplace())
	}
	return in.result(res, digest)
}

// entry is the state entry the install writes: a new package enabled and
// unpinned, an upgraded one as it was; both with the new digest and the
// accepted permissions consent decided.
func (in *installer) entry(st *state, digest string) stateEntry {
	e := stateEntry{Enabled: true}
	if in.exists {
		e = st.entry(in.name)
	}
	if in.exists && e.Digest != digest {
		e.PreviousOrigin = e.Origin
	}
	e.Digest, e.Accepted, e.Origin, e.Bake = digest, in.accepted, in.opts.Origin, in.bakeFor(digest)
	return e
}

// consent decides the permissions the install records as accepted
// (in.accepted), or fails an upgrade that asks for more than was accepted
// without opts.AcceptPermissions with a *PermissionsWidenedError.
func (in *installer) consent(st *state) error {
	asked := in.src.manifest.RequestedPermissions()
	if !in.exists {
		in.accepted = asked // a first install
		return nil
	}
	accepted, from := st.entry(in.name).Accepted, ""
	if in.cur != nil {
		from = in.cur.Manifest.Version.String()
	}
	switch {
	case accepted != nil:
	case in.cur != nil: // recorded before acceptances were: what it asks now
		accepted = in.cur.Manifest.RequestedPermissions()
	default:
		accepted = MinimalPermissions()
	}
	added := asked.Widening(accepted)
	switch {
	case in.opts.AcceptPermissions:
		in.accepted, in.added = asked, added
	case len(added) > 0:
		return &PermissionsWidenedError{Package: in.name, From: from, To: in.src.manifest.Version.String(), Added: added}
	default:
		in.accepted = accepted
	}
	return nil
}

// inspect looks at what is installed under the name now.
func (in *installer) inspect() {
	if _, err := os.Lstat(in.dest); err != nil {
		return
	}
	in.exists = true
	in.cur, _ = loadPackage(in.home, in.name, loadOpts{})
	if dir, err := filepath.EvalSymlinks(in.dest); err == nil {
		if d, err := (pkgfiles.Ref{Name: in.name, Dir: dir}).FilesDigest(); err == nil {
			in.curDigest = (*FileDigest)(d)
		}
	}
}

// makeStage creates a fresh staging directory for name under
// packages/.staging, which must be a plain directory (plainDir).
func makeStage(home, name string) (string, error) {
	root := filepath.Join(home, PackagesDir, StagingDir)
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return "", fmt.Errorf("install %s: %w", name, err)
	}
	if err := plainDir(root, stagingWhat, true); err != nil {
		return "", fmt.Errorf("install %s: %w", name, err)
	}
	stage, err := os.MkdirTemp(root, name+"-")
	if err != nil {
		return "", fmt.Errorf("install %s: %w", name, err)
	}
	return stage, nil
}

// dropStage deletes a staging directory and, when nothing else is in it,
// packages/.staging.
func dropStage(stage string) {
	os.RemoveAll(stage)
	os.Remove(filepath.Dir(stage)) // fails, harmlessly, while another stage is there
}

// prepare extracts and syncs the package into the staging directory,
// checks that it loads and digests it.
func (in *installer) prepare() (*FileDigest, error) {
	fail := func(err error) (*FileDigest, error) {
		var se *SourceError
		if errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("install %s: %w", in.name, err)
	}
	if err := in.src.extract(in.staged); err != nil {
		return fail(err)
	}
	in.step(StepExtracted)
	if err := in.src.syncTree(in.staged); err != nil {
		return fail(err)
	}
	if err := syncDir(in.stage); err != nil {
		return fail(err)
	}
	if pkg, warns := loadPackage(in.home, in.name, loadOpts{pkgsDir: in.stage}); pkg == nil {
		errs := []error{fmt.Errorf("install %s: the package does not load", in.name)}
		for _, w := range warns {
			errs = append(errs, errors.New(w.String()))
		}
		return nil, errors.Join(errs...)
	}
	d, err := (pkgfiles.Ref{Name: in.name, Dir: in.staged}).FilesDigest()
	if err != nil {
		return fail(err)
	}
	in.step(StepSynced)
	return (*FileDigest)(d), nil
}

// keep finishes an install of the files already installed: it records
// the digest when the state entry lacks it, and with
// opts.AcceptPermissions what the manifest asks for as accepted.
func (in *installer) keep(st *state, res *InstallResult) (*InstallResult, error) {
	res.Unchanged = true
	if e := st.entry(in.name); e.Digest != res.Digest || in.opts.AcceptPermissions {
		e.Digest = res.Digest
		if in.opts.AcceptPermissions {
			e.Accepted = in.src.manifest.RequestedPermissions()
		}
		st.Packages[in.name] = e
		if err := writeStateLocked(in.home, st); err != nil {
			return nil, fmt.Errorf("install %s: %w", in.name, err)
		}
	}
	pkg, err := in.loadPlaced(in.home, loadOpts{})
	if err != nil {
		return nil, err
	}
	res.Package = pkg
	return res, nil
}

// result fills res for a package placed and recorded.
func (in *installer) result(res *InstallResult, digest *FileDigest) (*InstallResult, error) {
	pkg, err := in.loadPlaced(in.home, loadOpts{})
	if err != nil {
		return nil, err
	}
	res.Package, res.PermissionsAccepted = pkg, in.added
	if in.exists {
		res.Previous, _ = loadPackage(in.home, in.name, loadOpts{pkgsDir: filepath.Join(in.home, PackagesDir, PreviousDir)})
		res.PreviousDigest, res.Changed = diffDigests(in.curDigest, digest)
	}
	return res, nil
}

// loadPlaced loads the package under its name and applies its state.
func (in *installer) loadPlaced(home string, opt loadOpts) (*Package, error) {
	pkg, warns := loadPackage(home, in.name, opt)
	if pkg == nil {
		errs := []error{fmt.Errorf("install %s: the installed package does not load", in.name)}
		for _, w := range warns {
			errs = append(errs, errors.New(w.String()))
		}
		return nil, errors.Join(errs...)
	}
	st, err := readState(home)
	if err != nil {
		return nil, err
	}
	e := st.entry(in.name)
	e.apply(pkg)
	return pkg, nil
}

// diffDigests returns the sum of a (nil: unknown) and the files that
// differ between a and b, sorted.
func diffDigests(a, b *FileDigest) (string, []string) {
	if a == nil {
		return "", nil
	}
	changed := pkgfiles.ChangedFiles(a.Files, b.Files)
	if changed == nil {
		changed = []string{}
	}
	return a.Sum, changed
}

// cleanLeftoversLocked deletes what a killed install, upgrade, rollback or
// remove left in packages/: the staging directory and, from earlier
// versions, .install-* and .remove-* directories. The caller holds the
// home lock, so no operation is using them.
//
// Every install, upgrade, rollback and remove starts with it, so it first
// refuses, before anything is deleted or written, a packages/.staging or
// packages/.previous that is a symbolic link or not a directory
// (checkHiddenDirs).
func cleanLeftoversLocked(home string) error {
	if err := checkHiddenDirs(home); err != nil {
		return err
	}
	entries, err := os.ReadDir(filepath.Join(home, PackagesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("home %s: %w", home, err)
	}
	var errs []error
	for _, e := range entries {
		if n := e.Name(); n == StagingDir || strings.HasPrefix(n, ".install-") || strings.HasPrefix(n, ".remove-") {
			if err := os.RemoveAll(filepath.Join(home, PackagesDir, n)); err != nil {
				errs = append(errs, fmt.Errorf("home %s: remove leftover %s: %w", home, n, err))
			}
		}
	}
	return errors.Join(errs...)
}

// checkedSource opens and checks the source at src for an install into
// home (made absolute): every entry against opts.Limits, the home (its
// hidden directories included: checkHiddenDirs), and the installed
// package it would replace. InstallSource and PreviewInstall both start
// with it, so that a preview refuses what an install refuses.
func checkedSource(home, src string, opts InstallOptions) (string, *source, error) {
	if opts.Origin != "" && !validOrigin(opts.Origin) {
		return "", nil, fmt.Errorf("install %s: origin %q is not a reference by digest (…@sha256:<64 hex>)", src, opts.Origin)
	}
	s, err := openSource(src, opts.Limits.withDefaults())
	if err != nil {
		return "", nil, err
	}
	if home, err = filepath.Abs(home); err != nil {
		return "", nil, err
	}
	if opts.ExpectManifest != nil && sha256Hex(opts.ExpectManifest) != s.manifestSHA256 {
		return "", nil, s.refuse(ManifestFile, RuleManifest, "the manifest differs from the one the artifact's config holds")
	}
	if msg := s.manifest.Runtime.NoPlatform(); msg != "" {
		return "", nil, s.refuse(ManifestFile, RulePlatform, "%s", msg)
	}
	if err := s.checkHome(home); err != nil {
		return "", nil, err
	}
	if err := checkHiddenDirs(home); err != nil {
		return "", nil, err
	}
	if err := precheck(home, s, opts); err != nil {
		return "", nil, err
	}
	return home, s, nil
}
