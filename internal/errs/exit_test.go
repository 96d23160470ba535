package errs

import (
	"errors"
	"fmt"
	"testing"
)

type coded int

func (c coded) Error() string { return "coded" }
func (c coded) ExitCode() int { return int(c) }

func TestCodeOf(t *testing.T) {
	if _, ok := CodeOf(errors.New("plain")); ok {
		t.Error("a plain error carries a code")
	}
	if c, ok := CodeOf(fmt.Errorf("wrapped: %w", &Usage{Err: errors.New("--seed")})); !ok || c != ExitUsage {
		t.Errorf("usage: %d %v", c, ok)
	}
	if c, ok := CodeOf(fmt.Errorf("outer: %w", coded(ExitRecord))); !ok || c != ExitRecord {
		t.Errorf("record: %d %v", c, ok)
	}
	if !IsUsage(fmt.Errorf("x: %w", &Usage{Err: errors.New("y")})) || IsUsage(coded(2)) {
		t.Error("IsUsage")
	}
}
