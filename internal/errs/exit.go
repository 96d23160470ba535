package errs

import "errors"

// Exit codes of spec/cli.md. An error carries its code (Coder); main
// maps it once (cli.Code), so no caller decides a number.
const (
	ExitOK          = 0
	ExitFailed      = 1   // the run ran; some requests failed, or a check failed
	ExitUsage       = 2   // usage or configuration error
	ExitEngine      = 3   // the engine is unavailable before the run
	ExitRecord      = 4   // the run record could not be written completely
	ExitGate        = 5   // compare --gate: a gate failed
	ExitInterrupted = 130 // SIGINT/SIGTERM, or q during a run
)

// Coder is an error that carries its process exit code.
type Coder interface {
	error
	ExitCode() int
}

// CodeOf is the exit code err carries (the outermost Coder of its
// chain); ok is false when it carries none.
func CodeOf(err error) (code int, ok bool) {
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode(), true
	}
	return 0, false
}

// Usage is a usage or configuration problem (exit 2) whose message names
// the flag, file or field.
type Usage struct{ Err error }

func (e *Usage) Error() string { return e.Err.Error() }
func (e *Usage) Unwrap() error { return e.Err }
func (e *Usage) ExitCode() int { return ExitUsage }

// IsUsage reports whether err is a usage error.
func IsUsage(err error) bool {
	var u *Usage
	return errors.As(err, &u)
}
