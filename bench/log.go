package bench

import (
	"context"
	"log/slog"
)

type loggerKey struct{}

// WithLogger returns ctx carrying the debug log (--log-file) that
// Prepare hands to the run, its client and its metrics sampler.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// LoggerFrom is ctx's debug log; a logger that discards when there is
// none, so callers never check.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}
