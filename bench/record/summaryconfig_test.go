package record

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/config"
)

// The summary's config block keeps LMCache's keys in LMCache's order,
// then the workload's, prompt_salt and the shard block, byte for byte.
func TestSummaryConfigPinned(t *testing.T) {
	ldqa := config.Default()
	for k, v := range map[string]string{"workload": config.LongDocQA, "model": "m", "tokens_per_gb_kvcache": "5000", "no_csv": "true"} {
		if err := ldqa.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	rag := config.Default()
	for k, v := range map[string]string{"workload": config.RAGQAQuality, "served_model_name": "alias", "no_warmup": "true",
		"rag_template_kwargs": "enable_thinking=false", "prompt_salt": "", "shard": "1/4", "start_at": "2026-01-02T15:04:05Z", "run_key": "r1",
		"rag_dataset": "<d&>.jsonl"} {
		if err := rag.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	ce := config.Default()
	for k, v := range map[string]string{"workload": config.ConcurrentExactness, "ce_levels": "1,2", "ce_reference_extra_body": `{"a":1}`, "quiet": "true"} {
		if err := ce.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	sharded := config.Default()
	for k, v := range map[string]string{"workload": config.RandomPrefill, "shard": "0/2", "run_key": "r2", "prompt_salt": "fixed <salt>", "ramp_up": "5s"} {
		if err := sharded.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		cfg  *config.Config
		want string
	}{
		{ldqa, `{"engine_url":"http://127.0.0.1:8000","model":"m","served_model_name":"","workload":"long-doc-qa","kv_cache_volume_gb":100,"tokens_per_gb_kvcache":5000,"seed":42,"output_dir":"/runs/r1","export_csv":false,"export_json":true,"quiet":false,"ignore_eos":false,"warmup_policy":"run","ldqa_document_length":10000,"ldqa_query_per_document":2,"ldqa_shuffle_policy":"random","ldqa_num_inflight_requests":3,"ldqa_max_output_length":128,"prompt_salt":"auto"}`},
		{rag, `{"engine_url":"http://127.0.0.1:8000","model":"","served_model_name":"alias","workload":"rag-qa-quality","kv_cache_volume_gb":100,"tokens_per_gb_kvcache":0,"seed":42,"output_dir":"/runs/r1","export_csv":true,"export_json":true,"quiet":false,"ignore_eos":false,"warmup_policy":"skip","rag_dataset":"\u003cd\u0026\u003e.jsonl","rag_num_samples":50,"rag_max_output_length":1024,"rag_doc_align_tokens":256,"rag_template_kwargs":["enable_thinking=false"],"rag_output":"","prompt_salt":"auto","shard":{"index":1,"count":4,"start_at":"2026-01-02T15:04:05Z","run_key":"r1"}}`},
		{ce, `{"engine_url":"http://127.0.0.1:8000","model":"","served_model_name":"","workload":"concurrent-exactness","kv_cache_volume_gb":100,"tokens_per_gb_kvcache":0,"seed":42,"output_dir":"/runs/r1","export_csv":true,"export_json":true,"quiet":true,"ignore_eos":false,"warmup_policy":"run","ce_levels":[1,2],"ce_prompts":"","ce_tokens":64,"ce_reps":1,"ce_temperature":0,"ce_alone":false,"ce_reference_extra_body":"{\"a\":1}","prompt_salt":"auto"}`},
		{sharded, `{"engine_url":"http://127.0.0.1:8000","model":"","served_model_name":"","workload":"random-prefill","kv_cache_volume_gb":100,"tokens_per_gb_kvcache":0,"seed":42,"output_dir":"/runs/r1","export_csv":true,"export_json":true,"quiet":false,"ignore_eos":false,"warmup_policy":"run","rp_request_length":10000,"rp_num_requests":50,"prompt_salt":"fixed \u003csalt\u003e","shard":{"index":0,"count":2,"start_at":null,"run_key":"r2"}}`},
	} {
		got, err := json.Marshal(SummaryConfig(c.cfg, "http://127.0.0.1:8000", "/runs/r1"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("summary config of %s:\n got %s\nwant %s", c.cfg.Workload(), got, c.want)
		}
	}
}

// The summary names the engine by the URL it is given, never by the one
// the user typed with credentials.
func TestSummaryConfigHoldsNoCredentials(t *testing.T) {
	const pass = "s3cr3t"
	c := config.Default()
	for k, v := range map[string]string{"workload": config.LongDocQA, "engine_url": "http://alice:" + pass + "@gpu:8000",
		"lmcache_url": "carol:" + pass + "@lm:9000", "metrics_url": "http://bob:" + pass + "@m:9090/metrics"} {
		if err := c.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(SummaryConfig(c, c.String("engine_url"), "/x"))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, pass) || strings.Contains(s, "alice") || !strings.Contains(s, `"engine_url":"http://gpu:8000"`) {
		t.Errorf("summary config: %s", s)
	}
}
