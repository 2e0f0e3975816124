package pluginpkg

import (
	"errors"
	"os"
	"reflect"
	"testing"
)

// TestPreviewInstall previews an upgrade: the home is untouched, the
// preview home holds the new version and links to the others, with the
// state the upgrade would write; Close removes it.
func TestPreviewInstall(t *testing.T) {
	home := t.TempDir()
	for _, src := range []string{writeArchive(t, "tar.gz", pkgEntries("demo", "1.0.0")), writeArchive(t, "zip", pkgEntries("other", "1.0.0"))} {
		if _, err := InstallSource(home, src, InstallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := Disable(home, "other"); err != nil {
		t.Fatal(err)
	}
	v2 := writeArchive(t, "zip", pkgEntries("demo", "2.0.0"))
	before := snapshotTree(t, home)
	if _, err := PreviewInstall(home, v2, InstallOptions{}); !errors.Is(err, ErrAlreadyInstalled) {
		t.Errorf("PreviewInstall without Upgrade: %v", err)
	}
	p, err := PreviewInstall(home, v2, InstallOptions{Upgrade: true})
	if err != nil {
		t.Fatal(err)
	}
	assertUnchanged(t, home, before)
	inst, err := LoadInstalled(p.Home)
	if err != nil || !reflect.DeepEqual(summary(inst), []string{"demo enabled=yes", "other enabled=no"}) {
		t.Errorf("preview home: %v %v", summary(inst), err)
	}
	res := p.Result
	if res.Package.Manifest.Version.String() != "2.0.0" || res.Previous.Manifest.Version.String() != "1.0.0" ||
		res.Unchanged || len(res.Changed) != 3 || res.Digest != digestOf(t, res.Package.Dir) || res.Package.Digest != res.Digest {
		t.Errorf("preview result %+v", res)
	}
	dir := p.Home
	if err := errors.Join(p.Close(), p.Close()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", dir, err)
	}
	same, err := PreviewInstall(home, writeArchive(t, "tar.gz", pkgEntries("demo", "1.0.0")), InstallOptions{})
	if err != nil || !same.Result.Unchanged || same.Result.Previous != nil {
		t.Errorf("preview of the installed files: %+v %v", same, err)
	}
	same.Close()
	assertUnchanged(t, home, before)
}
