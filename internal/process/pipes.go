package process

import "os"

// pipes holds both ends of the three stdio pipes until the child has them.
type pipes struct {
	stdinR, stdinW   *os.File
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
	inodes           [3]uint64 // of stdin, stdout and stderr (see pipeInode)
}

func newPipes() (*pipes, error) {
	p := new(pipes)
	var err error
	if p.stdinR, p.stdinW, p.inodes[0], err = pipe(1); err != nil {
		return nil, err
	}
	if p.stdoutR, p.stdoutW, p.inodes[1], err = pipe(0); err != nil {
		p.closeAll()
		return nil, err
	}
	if p.stderrR, p.stderrW, p.inodes[2], err = pipe(0); err != nil {
		p.closeAll()
		return nil, err
	}
	return p, nil
}

// closeChildEnds closes the ends the child inherited; the host keeps the
// others.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.stdinR, p.stdoutW, p.stderrW} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeAll() {
	p.closeChildEnds()
	for _, f := range []*os.File{p.stdinW, p.stdoutR, p.stderrR} {
		if f != nil {
			f.Close()
		}
	}
}
