// Package cli holds kvbench's commands (run, results, compare, doctor,
// sim, version) and the headless front-end. main.go only builds the root
// and maps errors to exit codes.
package cli

import (
	"errors"
	"fmt"
	"github.com/kvbench/kvbench/internal/errs"
	"github.com/spf13/cobra"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/kvbench/kvbench/internal/textclean"
)

// ExitCode is an error that carries a process exit code; its message has
// already been printed (or there is none).
type ExitCode int

func (e ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e ExitCode) ExitCode() int { return int(e) }

// UsageError is a usage or configuration problem: exit code 2, one line.
// It is the core's own (errs.Usage), so no layer re-wraps another's.
type UsageError = errs.Usage

// Usagef returns a usage error.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Code maps an error from a command to the exit code of spec/cli.md and
// the one line to print (empty when nothing is to be printed).
func Code(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var printed ExitCode
	if errors.As(err, &printed) {
		return int(printed), ""
	}
	if code, ok := errs.CodeOf(err); ok {
		return code, oneLine(err.Error())
	}
	return errs.ExitFailed, oneLine(err.Error())
}

// oneLine is the first line of an error, cleaned (textclean.Line): an
// error quotes paths, folder names and engine answers from many layers,
// so it is cleaned where it is printed.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return textclean.Line(s)
}

// IsTTY reports whether stdin and stdout are both terminals (and CI is
// not set), i.e. whether a full-screen program may start.
//
// A terminal that cannot draw a full screen (TERM=dumb, or no TERM at
// all: an editor's shell buffer, some CI runners) counts as none, so
// every command falls back to its headless output.
func IsTTY() bool {
	return fullScreenTerm(os.Getenv("TERM")) &&
		term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
}

// fullScreenTerm reports whether a TERM value can draw the full screen.
func fullScreenTerm(t string) bool { return t != "" && t != "dumb" }

// StderrTTY reports whether stderr is a terminal (progress cadence).
func StderrTTY() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// UsageErrors makes cobra's own errors usage errors where they arise, so
// the exit code travels on the error instead of being guessed from its
// words: bad flags and values (every command's flag error function) and
// wrong arguments, an unknown command among them (every command's Args).
// It walks root's commands; call it once the tree is built.
func UsageErrors(root *cobra.Command) {
	flagErr := root.FlagErrorFunc()
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if err = flagErr(c, err); !errs.IsUsage(err) {
			err = &UsageError{Err: err}
		}
		return err
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return &UsageError{Err: err}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
