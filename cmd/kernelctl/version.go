package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/extkernel/extkernel/protocol"
)

// versionOutput is what `kernelctl version --json` prints (docs/cli.md).
type versionOutput struct {
	Kernelctl string `json:"kernelctl"`
	Revision  string `json:"revision,omitempty"`
	Protocol  string `json:"protocol"`
	Go        string `json:"go"`
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the kernelctl, protocol and Go versions",
		Long: `Print kernelctl's version (its module version, or "(devel)" for a build
from a checkout, with the VCS revision when the build recorded one), the
plugin protocol version it speaks, and the Go version it was built with.`,
		Example: `  kernelctl version
  kernelctl version --json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			out := buildVersion()
			if g.json {
				return g.printJSON(out)
			}
			rev := ""
			if out.Revision != "" {
				rev = " (" + out.Revision + ")"
			}
			fmt.Fprintf(g.stdout, "kernelctl %s%s\nprotocol %s\n%s\n", out.Kernelctl, rev, out.Protocol, out.Go)
			return nil
		},
	}
}

// buildVersion reads the versions from the binary's build information.
func buildVersion() versionOutput {
	out := versionOutput{Kernelctl: "(devel)", Protocol: protocol.Version, Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return out
	}
	if v := bi.Main.Version; v != "" {
		out.Kernelctl = v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			out.Revision = s.Value
			if len(out.Revision) > 12 {
				out.Revision = out.Revision[:12]
			}
		}
	}
	return out
}
