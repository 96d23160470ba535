//go:build !linux

package testutil

import "testing"

// reservedPort is Linux only; elsewhere ClosedAddr closes the port again.
func reservedPort(testing.TB) (string, bool) { return "", false }
