package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Preview is a home as InstallSource would leave it, built in a temporary
// directory without writing anything to the home: what a plan of an
// install or upgrade not yet done is computed from (`kernelctl upgrade
// --dry-run`). Close removes it.
type Preview struct {
	// Home is the preview home: packages/<name> holds the new package,
	// every other entry of the home's packages/ is a symbolic link to it
	// there, and state.json is the home's with the entry the install would
	// write. Only the packages and state are there.
	Home string
	// Result is what InstallSource would return. Result.Package is the
	// copy in the preview home; Result.Previous, when set, is the installed
	// package, in the home.
	Result *InstallResult
}

// Close removes the preview home. It is idempotent.
func (p *Preview) Close() error {
	if p.Home == "" {
		return nil
	}
	dir := p.Home
	p.Home = ""
	return os.RemoveAll(dir)
}

// PreviewInstall checks the source at src as InstallSource does, and
// builds the home as the install would leave it in a temporary directory
// (os.TempDir). It takes no lock and writes nothing to home. Errors are
// InstallSource's; opts.OnStep is not called. On Linux and macOS the
// preview links to the home's other packages; where symbolic links cannot
// be made (Windows without the privilege) it fails.
func PreviewInstall(home, src string, opts InstallOptions) (*Preview, error) {
	home, s, err := checkedSource(home, src, opts)
	if err != nil {
		return nil, err
	}
	st, err := readState(home)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "extkernel-preview-")
	if err != nil {
		return nil, fmt.Errorf("preview %s: %w", s.manifest.Name, err)
	}
	p := &Preview{Home: dir}
	res, err := buildPreview(home, dir, s, st, opts)
	if err != nil {
		return nil, errors.Join(err, p.Close())
	}
	p.Result = res
	return p, nil
}

// buildPreview fills the preview home dir.
func buildPreview(home, dir string, s *source, st *state, opts InstallOptions) (*InstallResult, error) {
	opts.OnStep = nil
	in := &installer{home: home, src: s, opts: opts, name: s.manifest.Name,
		dest: filepath.Join(home, PackagesDir, s.manifest.Name), stage: filepath.Join(dir, PackagesDir)}
	in.staged = filepath.Join(in.stage, in.name)
	in.inspect()
	if err := os.Mkdir(in.stage, 0o755); err != nil {
		return nil, fmt.Errorf("preview %s: %w", in.name, err)
	}
	digest, err := in.prepare()
	if err != nil {
		return nil, err
	}
	res := &InstallResult{Source: s.kind, Digest: digest.Sum, Unchanged: in.exists && in.curDigest != nil && in.curDigest.Sum == digest.Sum}
	if in.exists && !res.Unchanged && !opts.Upgrade {
		return nil, alreadyInstalled(home, in.cur, s.manifest)
	}
	if res.Unchanged {
		in.accepted = st.entry(in.name).Accepted
		if opts.AcceptPermissions {
			in.accepted = s.manifest.RequestedPermissions()
		}
	} else if err := in.consent(st); err != nil {
		return nil, err
	}
	if err := linkOthers(home, in.stage, in.name); err != nil {
		return nil, fmt.Errorf("preview %s: %w", in.name, err)
	}
	if in.cur != nil {
		e := st.entry(in.name)
		e.apply(in.cur)
	}
	st.Packages[in.name] = in.entry(st, digest.Sum)
	if err := writeStateLocked(dir, st); err != nil { // the preview is this process's own
		return nil, fmt.Errorf("preview %s: %w", in.name, err)
	}
	if res.Package, err = in.loadPlaced(dir, loadOpts{}); err != nil {
		return nil, err
	}
	res.PermissionsAccepted = in.added
	if in.exists && !res.Unchanged {
		res.Previous = in.cur
		res.PreviousDigest, res.Changed = diffDigests(in.curDigest, digest)
	}
	return res, nil
}

// linkOthers links every entry of home's packages/ but name and the hidden
// ones into pkgs.
func linkOthers(home, pkgs, name string) error {
	entries, err := os.ReadDir(filepath.Join(home, PackagesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == name || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if err := os.Symlink(filepath.Join(home, PackagesDir, e.Name()), filepath.Join(pkgs, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
