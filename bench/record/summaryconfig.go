package record

import "github.com/kvbench/kvbench/config"

// SummaryConfig is the `config` block of bench_summary.json: LMCache's
// config fields in its order, then the workload's keys, the prompt salt
// and, for a sharded run (or one given --start-at), the shard block.
// engineURL is the normalised URL actually used, without credentials.
func SummaryConfig(c *config.Config, engineURL, outputDir string) Ordered {
	o := Ordered{
		{"engine_url", engineURL},
		{"model", c.String("model")},
		{"served_model_name", c.String("served_model_name")},
		{"workload", c.Workload()},
		{"kv_cache_volume_gb", c.Float("kv_cache_volume")},
		{"tokens_per_gb_kvcache", c.Int("tokens_per_gb_kvcache")},
		{"seed", c.Int("seed")},
		{"output_dir", outputDir},
		{"export_csv", !c.Bool("no_csv")},
		{"export_json", true},
		{"quiet", c.Bool("quiet")},
		{"ignore_eos", c.Bool("ignore_eos")},
		{"warmup_policy", c.WarmupPolicy()},
	}
	for _, f := range config.WorkloadFields(c.Workload()) {
		o = append(o, Pair{f.Key, c.JSONValue(f.Key)})
	}
	salt := c.String("prompt_salt")
	if salt == "" {
		salt = "auto"
	}
	o = append(o, Pair{"prompt_salt", salt})
	if b := c.ShardBlock(); b != nil {
		o = append(o, Pair{"shard", b})
	}
	return o
}
