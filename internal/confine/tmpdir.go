package confine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// TmpRoot is the directory of the data root holding each confined
// plugin's ${tmp}: <data root>/.tmp/<name>. No package name starts with a
// dot, so it is no plugin's data directory.
const TmpRoot = ".tmp"

// Tmp is a confined plugin's private temporary directory (${tmp}, its
// TMPDIR), held from before its start until Release, after its process
// group is gone.
//
// With a data root it is <data root>/.tmp/<name>: made once and kept, not
// made and removed per start (creating directories side by side in one
// parent contends on the parent's lock: 16 plugins starting at once spent
// more on their mkdir in /tmp than on their Landlock rules), emptied when
// it is held and when it is released, and locked (flock) while held, so
// that two instances of one plugin (a reload's old and new, or two hosts
// sharing a data root) never share one: the second gets a directory of
// its own. That one, and every ${tmp} of a host with no data root or on
// a system without flock, is made in the system's temporary directory
// (extkernel-tmp-<name>-<random>) and removed when released.
type Tmp struct {
	// Path is the directory, absolute.
	Path string
	held *os.File // the kept directory, open and locked; nil for a made one
}

// HoldTmp returns the empty, held ${tmp} of the plugin name whose data
// root is dataRoot ("" for none).
func HoldTmp(dataRoot, name string) (*Tmp, error) {
	if dataRoot != "" && canKeep {
		dir := filepath.Join(dataRoot, TmpRoot, name)
		f, err := holdKept(dir)
		if err == nil {
			return &Tmp{Path: dir, held: f}, nil
		}
		if !errors.Is(err, errTmpBusy) && !errors.Is(err, errors.ErrUnsupported) {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "extkernel-tmp-"+name+"-")
	if err != nil {
		return nil, err
	}
	return &Tmp{Path: dir}, nil
}

// errTmpBusy is holdKept's failure when another instance holds the
// directory.
var errTmpBusy = errors.New("held by another instance of the plugin")

// holdKept makes dir (mode 0700) if it is missing, opens and locks it
// without waiting, and empties it.
func holdKept(dir string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	f, err := openDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	if err := lockDir(f); err != nil {
		f.Close()
		return nil, err
	}
	if err := emptyDir(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("empty: %w", err)
	}
	return f, nil
}

// emptyDir removes everything in the directory f is open on (symbolic
// links as links, never what they point to).
func emptyDir(f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		errs = append(errs, os.RemoveAll(filepath.Join(f.Name(), n)))
	}
	return errors.Join(errs...)
}

// Release empties and unlocks a kept directory, or removes a made one:
// once the plugin's process group is gone. It is safe on a nil *Tmp and
// to call more than once.
func (t *Tmp) Release() error {
	if t == nil || t.Path == "" {
		return nil
	}
	defer func() { t.Path, t.held = "", nil }()
	if t.held == nil {
		return os.RemoveAll(t.Path)
	}
	err := emptyDir(t.held)
	return errors.Join(err, t.held.Close()) // closing releases the lock
}
