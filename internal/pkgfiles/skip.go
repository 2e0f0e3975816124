package pkgfiles

import (
	"path"
	"strings"
)

// Skipped reports whether the file or directory at rel (slash-separated,
// relative to the package directory) is one FileDigest leaves out: a
// directory named __pycache__, .git, .hg or .svn, node_modules/.cache, or a
// file ending in .pyc. What is skipped is not part of the package: the
// digest ignores it and an install does not copy it.
func Skipped(rel string, dir bool) bool {
	name := path.Base(rel)
	if dir {
		switch name {
		case "__pycache__", ".git", ".hg", ".svn":
			return true
		}
		return name == ".cache" && path.Base(path.Dir(rel)) == "node_modules"
	}
	return strings.HasSuffix(name, ".pyc")
}
