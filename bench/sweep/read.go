package sweep

import "github.com/kvbench/kvbench/bench/record"

// ReadFile reads dir/sweep.json (record.ReadSweep).
func ReadFile(dir string) (*File, error) {
	f, _, err := record.ReadSweep(dir)
	return f, err
}

// CellDir is the run folder of a cell (its run id is a folder name under
// cells/; anything else in it is not followed).
func CellDir(dir string, c Cell) string {
	return record.SweepCellDir(dir, c.RunID)
}
