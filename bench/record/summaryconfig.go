package record

import "github.com/kvbench/kvbench/config"

// SummaryConfig is the `config` block of bench_summary.json: LMCache's
// config fields in its order, then the workload's keys, the prompt salt
// and, for a sharded run (or one given --start-at), the shard block.
// engineURL is the normalised URL actually used, without credentials.
func SummaryConfig(c *config.Config, engineURL, outputDir string) Ordered {
	s := c.Settings()
	o := Ordered{
		{"engine_url", engineURL},
		{"model", s.Model},
		{"served_model_name", s.ServedModelName},
		{"workload", s.Workload},
		{"kv_cache_volume_gb", s.KVCacheGB},
		{"tokens_per_gb_kvcache", s.TokensPerGB},
		{"seed", s.Seed},
		{"output_dir", outputDir},
		{"export_csv", !s.NoCSV},
		{"export_json", true},
		{"quiet", s.Quiet},
		{"ignore_eos", s.IgnoreEOS},
		{"warmup_policy", c.WarmupPolicy()},
	}
	for _, f := range config.WorkloadFields(c.Workload()) {
		o = append(o, Pair{f.Key, c.JSONValue(f.Key)})
	}
	salt := s.PromptSalt
	if salt == "" {
		salt = "auto"
	}
	o = append(o, Pair{"prompt_salt", salt})
	if b := c.ShardBlock(); b != nil {
		o = append(o, Pair{"shard", b})
	}
	return o
}
