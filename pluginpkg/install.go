package pluginpkg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Install validates the manifest in srcDir, copies the directory tree into
// <home>/packages/<name> and records the package as enabled (clearing any
// stale state entry of that name). home and packages/ are created as needed.
//
// It returns the manifest's *ValidationError when the manifest is invalid,
// and an error wrapping ErrAlreadyInstalled when a package of that name is
// installed. The copy is staged in a hidden directory and renamed into
// place, so a failed install leaves no partial package; if recording the
// state fails the copy is removed again. Regular files keep their
// permission bits, symbolic links are copied as links, other file types are
// refused. The installed copy must load (LoadInstalled would list it);
// otherwise it is removed again and the error says why.
func Install(home, srcDir string) (*Package, error) {
	m, err := ParseFile(filepath.Join(srcDir, ManifestFile))
	if err != nil {
		return nil, err
	}
	home, err = filepath.Abs(home)
	if err != nil {
		return nil, err
	}
	src, err := filepath.EvalSymlinks(srcDir)
	if err != nil {
		return nil, fmt.Errorf("install %s: %w", srcDir, err)
	}
	pkgsDir := filepath.Join(home, PackagesDir)
	if err := os.MkdirAll(pkgsDir, 0o755); err != nil {
		return nil, fmt.Errorf("install %s: %w", m.Name, err)
	}
	if realPkgs, err := filepath.EvalSymlinks(pkgsDir); err == nil && within(src, realPkgs) {
		return nil, fmt.Errorf("install %s: source %s contains the home's packages directory", m.Name, srcDir)
	}
	unlock, err := lockHome(home)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := installLocked(home, src, m.Name); err != nil {
		return nil, err
	}
	pkg, warns := loadPackage(home, m.Name, loadOpts{})
	if pkg == nil {
		// The copy does not load (say plugin.json is a symbolic link whose
		// relative target is outside the package): take it out again.
		errs := []error{fmt.Errorf("install %s: the installed copy does not load", m.Name)}
		for _, w := range warns {
			errs = append(errs, errors.New(w.String()))
		}
		return nil, errors.Join(append(errs, removeLocked(home, m.Name))...)
	}
	pkg.Enabled = true
	return pkg, nil
}

// installLocked copies src into packages/name and records the state. The
// caller holds the home lock.
func installLocked(home, src, name string) error {
	dest := filepath.Join(home, PackagesDir, name)
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("package %q in %s: %w", name, home, ErrAlreadyInstalled)
	}
	st, err := readState(home)
	if err != nil {
		return err
	}
	stage, err := os.MkdirTemp(filepath.Join(home, PackagesDir), ".install-"+name+"-")
	if err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	defer os.RemoveAll(stage) // no-op once renamed
	if err := copyTree(src, stage); err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	if err := os.Rename(stage, dest); err != nil {
		return fmt.Errorf("install %s: %w", name, err)
	}
	st.Packages[name] = stateEntry{Enabled: true}
	if err := writeStateLocked(home, st); err != nil {
		return errors.Join(fmt.Errorf("install %s: %w", name, err), os.RemoveAll(dest))
	}
	return nil
}

// within reports whether path is dir or inside it (both cleaned, absolute).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// copyTree copies the tree at src into the existing directory dst.
func copyTree(src, dst string) error {
	if err := os.Chmod(dst, 0o755); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch mode := info.Mode(); {
		case mode.IsDir():
			return os.Mkdir(target, mode.Perm()|0o700)
		case mode.IsRegular():
			return copyFile(p, target, mode.Perm())
		case mode&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			return fmt.Errorf("%s: cannot install a %s", p, mode.Type())
		}
	})
}

// copyFile copies a regular file, syncing it so that a renamed-in package
// is complete on disk.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = out.ReadFrom(in)
	if err == nil {
		err = out.Chmod(perm) // not subject to the umask
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
