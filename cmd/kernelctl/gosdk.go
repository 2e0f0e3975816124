package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// sdkModule is the module of the Go SDK.
const sdkModule = "github.com/extkernel/extkernel"

// goSDK is how a new Go plugin's go.mod requires the SDK: a version, and
// a replace to a local checkout when SDKDir is set.
type goSDK struct {
	SDKModule  string
	SDKVersion string
	SDKDir     string // absolute, or "" for a published version
	GoVersion  string // the go directive, the SDK module's
	// Replace is SDKDir relative to the new package's directory
	// ("../extkernel"), which go.mod's replace names: a go.mod with an
	// absolute path builds on one machine only (relativeReplace).
	Replace string
}

// relativeReplace sets sdk.Replace to the SDK checkout relative to the
// package directory dir, as a replace directive needs it ("./" or "../"
// first); the absolute path only where there is no relative one (another
// volume on Windows).
func (sdk *goSDK) relativeReplace(dir string) {
	sdk.Replace = sdk.SDKDir
	abs, err := filepath.Abs(dir)
	if err != nil || sdk.SDKDir == "" {
		return
	}
	rel, err := filepath.Rel(abs, sdk.SDKDir)
	if err != nil {
		return
	}
	rel = filepath.ToSlash(rel)
	if !strings.HasPrefix(rel, "../") && rel != ".." {
		rel = "./" + rel
	}
	sdk.Replace = rel
}

// findGoSDK finds the SDK for a new Go plugin: the checkout dir when
// given; else the checkout kernelctl was built from, when its source is
// still there; else a checkout holding the working directory; else, when
// kernelctl was built from a published version of the module, that
// version, with no replace.
func findGoSDK(dir string) (goSDK, error) {
	if dir != "" {
		sdk, err := checkout(dir)
		if err != nil {
			return goSDK{}, &usageError{fmt.Errorf("new: --sdk: %w", err)}
		}
		return sdk, nil
	}
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if sdk, err := checkout(filepath.Join(filepath.Dir(file), "..", "..")); err == nil {
			return sdk, nil
		}
		tried = append(tried, "kernelctl's source")
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if sdk, err := checkout(d); err == nil {
				return sdk, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
		tried = append(tried, "the working directory and its parents")
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == sdkModule && strings.HasPrefix(bi.Main.Version, "v") {
		return goSDK{SDKModule: sdkModule, SDKVersion: bi.Main.Version, GoVersion: strings.TrimPrefix(bi.GoVersion, "go")}, nil
	}
	return goSDK{}, fmt.Errorf("new: no checkout of %s found (looked at %s): pass --sdk DIR", sdkModule, strings.Join(tried, " and "))
}

// checkout returns the SDK of the module checkout in dir: its go.mod names
// the SDK module.
func checkout(dir string) (goSDK, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return goSDK{}, err
	}
	data, err := os.ReadFile(filepath.Join(abs, "go.mod"))
	if err != nil {
		return goSDK{}, err
	}
	sdk := goSDK{SDKModule: sdkModule, SDKVersion: "v0.0.0", SDKDir: abs}
	module := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "module" {
			module = strings.Trim(f[1], `"`)
		}
		if len(f) == 2 && f[0] == "go" {
			sdk.GoVersion = f[1]
		}
	}
	if module != sdkModule {
		return goSDK{}, fmt.Errorf("%s is not a checkout of %s (its go.mod says module %q)", abs, sdkModule, module)
	}
	if sdk.GoVersion == "" {
		return goSDK{}, errors.New(abs + "/go.mod has no go directive")
	}
	return sdk, nil
}
