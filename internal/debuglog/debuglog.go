// Package debuglog is the --log-file: JSON lines from log/slog at debug
// level, for bug reports. Every string that goes out is redacted first
// (a URL's user-info, and each secret the program registered with Hide),
// so no credential reaches the file whatever a caller logs, and cleaned
// (textclean.Clean: a log quotes engines' answers, and `cat` or `jq -r`
// of it would hand them to a terminal).
package debuglog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/kvbench/kvbench/internal/textclean"
)

// Open appends to the file at path (created 0600: a log may name hosts
// and paths) and returns a logger writing JSON lines to it.
func Open(path string) (*slog.Logger, *os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return New(f), f, nil
}

// New is a debug-level JSON logger over w, redacting as Open's does.
func New(w io.Writer) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})
	return slog.New(&redactor{next: h, secrets: &secrets{}})
}

// Hide registers a secret (an API key) to be replaced by xxxxx in every
// line l writes from now on; a logger that is not one of this package's
// ignores it.
func Hide(l *slog.Logger, secret string) {
	if l == nil || len(secret) < 4 {
		return
	}
	if r, ok := l.Handler().(*redactor); ok {
		r.secrets.add(secret)
	}
}

type secrets struct {
	mu   sync.RWMutex
	list []string
}

func (s *secrets) add(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, have := range s.list {
		if have == v {
			return
		}
	}
	s.list = append(s.list, v)
}

// userInfo matches the user-info of a URL in running text.
var userInfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@"]+@`)

func (s *secrets) redact(v string) string {
	s.mu.RLock()
	for _, sec := range s.list {
		v = strings.ReplaceAll(v, sec, "xxxxx")
	}
	s.mu.RUnlock()
	if strings.Contains(v, "@") {
		v = userInfo.ReplaceAllString(v, "$1")
	}
	return textclean.Clean(v)
}

type redactor struct {
	next    slog.Handler
	secrets *secrets
}

func (r *redactor) Enabled(ctx context.Context, l slog.Level) bool { return r.next.Enabled(ctx, l) }

func (r *redactor) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.secrets.redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.next.Handle(ctx, out)
}

func (r *redactor) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = r.attr(a)
	}
	return &redactor{next: r.next.WithAttrs(clean), secrets: r.secrets}
}

func (r *redactor) WithGroup(name string) slog.Handler {
	return &redactor{next: r.next.WithGroup(name), secrets: r.secrets}
}

// attr redacts every string an attribute holds: strings, errors and
// other values as their text, groups member by member.
func (r *redactor) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.secrets.redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, m := range g {
			clean[i] = r.attr(m)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, r.secrets.redact(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, r.secrets.redact(x.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
