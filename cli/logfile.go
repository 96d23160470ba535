package cli

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/internal/debuglog"
)

// AddLogFile gives root and every command under it --log-file FILE: a
// debug log of what the program does (slog, JSON lines), for bug reports.
// The logger travels in the command's context (bench.WithLogger) to the
// core and to the full-screen application; it never sees a credential
// (debuglog redacts).
func AddLogFile(root *cobra.Command) {
	var path string
	root.PersistentFlags().StringVar(&path, "log-file", "",
		"write a debug log (slog, JSON lines) of what the program does to `FILE`, for bug reports; never credentials")
	prev := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if prev != nil {
			if err := prev(cmd, args); err != nil {
				return err
			}
		}
		if path == "" {
			return nil
		}
		l, _, err := debuglog.Open(path)
		if err != nil {
			return Usagef("--log-file %s: %v", path, unwrapPath(err))
		}
		l.Info("start", "command", cmd.CommandPath(), "args", strings.Join(os.Args[1:], " "),
			"version", bench.Version, "go", runtime.Version(), "pid", os.Getpid())
		cmd.SetContext(bench.WithLogger(cmd.Context(), l))
		return nil
	}
}

// unwrapPath drops *PathError's repetition of the path.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
