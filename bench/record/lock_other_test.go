//go:build unix && (aix || solaris)

package record

import "testing"

// checkKilledLock: nothing is locked where flock is missing.
func checkKilledLock(t *testing.T, dir string) {
	if Locked(dir) {
		t.Error("locked without flock")
	}
}
