package visual

import "github.com/kvbench/kvbench/bench/record"

// maxJSONFile caps bench_summary.json and sweep.json.
const maxJSONFile = 64 << 20

// readSmall reads a JSON file of a record with its text cleaned
// (record.ReadJSON), so names reach the page and the charts' SVG as text
// XML takes.
func readSmall(path string) ([]byte, error) { return record.ReadJSON(path, maxJSONFile) }
