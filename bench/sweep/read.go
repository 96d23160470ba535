package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/kvbench/kvbench/bench/record"
)

// maxFileBytes caps sweep.json when reading: a search runs at most 1000
// cells of a few hundred bytes each.
const maxFileBytes = 16 << 20

// ReadFile reads dir/sweep.json (a regular file only, as every reader of
// a run folder does), its text cleaned (record.ReadJSON).
func ReadFile(dir string) (*File, error) {
	path := filepath.Join(dir, record.SweepFile)
	b, err := record.ReadJSON(path, maxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", record.SweepFile, err)
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("read %s: not a JSON object", path)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	f.CleanVerdicts()
	return &f, nil
}

// CellDir is the run folder of a cell (its run id is a folder name under
// cells/; anything else in it is not followed).
func CellDir(dir string, c Cell) string {
	return record.SweepCellDir(dir, c.RunID)
}
