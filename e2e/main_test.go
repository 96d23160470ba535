package e2e

import (
	"testing"

	"github.com/kvbench/kvbench/internal/testbin"
)

// TestMain removes the kvbench binary the end-to-end tests built.
func TestMain(m *testing.M) { testbin.Main(m) }
