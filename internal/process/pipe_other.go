//go:build !linux || extkernel_portable

package process

import "os"

// pipe returns an os.Pipe: both ends polled by the runtime (exec switches
// the child's end back to blocking when it hands it over). The inode is 0:
// the holders of a pipe are not looked for here.
func pipe(int) (r, w *os.File, inode uint64, err error) {
	r, w, err = os.Pipe()
	return r, w, 0, err
}
