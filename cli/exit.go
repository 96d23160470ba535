// Package cli holds kvbench's commands (run, results, compare, doctor,
// sim, version) and the headless front-end. main.go only builds the root
// and maps errors to exit codes.
package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/kvbench/kvbench/bench"
	"github.com/kvbench/kvbench/internal/textclean"
)

// ExitCode is an error that carries a process exit code; its message has
// already been printed (or there is none).
type ExitCode int

func (e ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// UsageError is a usage or configuration problem: exit code 2, one line.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

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
	var ec ExitCode
	if errors.As(err, &ec) {
		return int(ec), ""
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return 2, oneLine(ue.Error())
	}
	if bench.IsEngineUnavailable(err) {
		return 3, oneLine(err.Error())
	}
	msg := err.Error()
	// cobra's own flag and argument errors are usage errors.
	for _, p := range []string{"unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument",
		"unknown command", "accepts ", "requires at least", "requires exactly", "required flag", "bad flag syntax"} {
		if strings.Contains(msg, p) {
			return 2, oneLine(msg)
		}
	}
	return 1, oneLine(msg)
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
