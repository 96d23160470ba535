package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/bench"
)

// BuildInfo fills version, commit and date from the Go build information
// when ldflags did not set them, so a plain `go build` still says
// something true.
func BuildInfo() (version, commit, date string) {
	version, commit, date = bench.Version, bench.Commit, bench.Date
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	if version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if commit == "none" && s.Value != "" {
				commit = s.Value
				if len(commit) > 12 {
					commit = commit[:12]
				}
			}
		case "vcs.time":
			if date == "unknown" && s.Value != "" {
				date = s.Value
			}
		}
	}
	return
}

// NewVersionCommand is `kvbench version`.
func NewVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kvbench's version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, c, d := BuildInfo()
			fmt.Fprintf(cmd.OutOrStdout(), "kvbench %s (commit %s, built %s)\n", v, c, d)
			return nil
		},
	}
}
