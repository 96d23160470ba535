//go:build race

package sender

// raceEnabled: the race detector changes allocation counts and makes
// sync.Pool drop items at random.
const raceEnabled = true
