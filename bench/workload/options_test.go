package workload

import (
	"reflect"
	"slices"
	"testing"

	"github.com/kvbench/kvbench/config"
)

// TestEachWorkloadDecodesAllItsRows: every built-in workload's options
// struct names each of its settings rows once, in the rows' order, with
// the row's type (Decode panics on a wrong one), and holds the values
// the config gives.
func TestEachWorkloadDecodesAllItsRows(t *testing.T) {
	opts := map[string]any{
		config.LongDocQA: &ldqaOptions{}, config.MultiRoundChat: &mrcOptions{}, config.RandomPrefill: &rpOptions{},
		config.LongDocPermutator: &ldpOptions{}, config.PrefixSuffixTuner: &psfOptions{}, config.CacheProbe: &cpOptions{},
		config.ConcurrentExactness: &ceOptions{}, config.TraceReplay: &trOptions{}, config.KVTierPressure: &ktpOptions{},
		config.RAGQAQuality: &ragOptions{},
	}
	for _, name := range config.Workloads {
		o, ok := opts[name]
		if !ok {
			t.Errorf("%s: no options struct listed here", name)
			continue
		}
		c := config.Default()
		var rows []string
		for _, f := range config.WorkloadFields(name) {
			rows = append(rows, f.Key)
		}
		rt := reflect.TypeOf(o).Elem()
		var tags []string
		for i := range rt.NumField() {
			tags = append(tags, rt.Field(i).Tag.Get("setting"))
		}
		if !slices.Equal(tags, rows) {
			t.Errorf("%s: options name %v, its rows are %v", name, tags, rows)
		}
		c.Decode(o)
		v := reflect.ValueOf(o).Elem()
		for i, key := range tags {
			if got, want := v.Field(i).Interface(), c.Value(key); !reflect.DeepEqual(got, want) {
				t.Errorf("%s.%s = %v, the config holds %v", rt.Name(), rt.Field(i).Name, got, want)
			}
		}
	}
}
