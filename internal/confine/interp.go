package confine

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxInterpreterDepth bounds a chain of "#!" interpreters, as the kernel
// does (it allows 4 levels).
const maxInterpreterDepth = 4

// interpreters returns the files executing f executes: f itself, the
// interpreter its "#!" line names (for /usr/bin/env, the command it looks
// up on path, too), recursively, and the ELF interpreter (the dynamic
// loader) of each binary among them, every one with its symbolic links
// resolved. It returns what it found with the first error.
func interpreters(f, path string) ([]string, error) {
	var out []string
	for depth := 0; ; depth++ {
		real, err := filepath.EvalSymlinks(f)
		if err != nil {
			return out, err
		}
		out = append(out, real)
		interp, arg, elfInterp, err := sniffCached(real)
		if err != nil {
			return out, err
		}
		if elfInterp != "" {
			if l, err := filepath.EvalSymlinks(elfInterp); err == nil {
				out = append(out, l)
			}
			return out, nil
		}
		if interp == "" {
			return out, nil
		}
		if depth == maxInterpreterDepth {
			return out, fmt.Errorf("more than %d levels of #! interpreters", maxInterpreterDepth)
		}
		if filepath.Base(interp) == "env" && arg != "" && !strings.HasPrefix(arg, "-") {
			more, err := interpreters(interp, path)
			out = append(out, more...)
			if err != nil {
				return out, err
			}
			found, err := lookPath(arg, path)
			if err != nil {
				return out, fmt.Errorf("%s: #!%s %s: %s not found on PATH", real, interp, arg, arg)
			}
			interp = found
		}
		f = interp
	}
}

// sniff reads the start of the file f: a "#!" line's interpreter and its
// first argument, or an ELF binary's interpreter.
func sniff(f string) (interp, arg, elfInterp string, err error) {
	file, err := os.Open(f)
	if err != nil {
		return "", "", "", err
	}
	defer file.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(file, 256), 256).ReadString('\n')
	if strings.HasPrefix(line, "#!") {
		fields := strings.Fields(strings.TrimPrefix(line, "#!"))
		if len(fields) == 0 {
			return "", "", "", fmt.Errorf("%s: empty #! line", f)
		}
		if len(fields) > 1 {
			arg = fields[1]
		}
		return fields[0], arg, "", nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return "", "", "", err
	}
	ef, err := elf.NewFile(file)
	if err != nil {
		return "", "", "", nil // neither: the kernel decides (binfmt_misc), nothing more to grant
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
			if err != nil {
				return "", "", "", fmt.Errorf("%s: read its ELF interpreter: %w", f, err)
			}
			return "", "", strings.TrimRight(string(b), "\x00"), nil
		}
	}
	return "", "", "", nil
}
