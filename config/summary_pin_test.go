package config

import (
	"encoding/json"
	"testing"
)

// The summary's config block keeps LMCache's keys in LMCache's order,
// then the workload's, prompt_salt and the shard block, byte for byte.
func TestSummaryConfigPinned(t *testing.T) {
	ldqa := Default()
	for k, v := range map[string]string{"workload": LongDocQA, "model": "m", "tokens_per_gb_kvcache": "5000", "no_csv": "true"} {
		if err := ldqa.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	rag := Default()
	for k, v := range map[string]string{"workload": RAGQAQuality, "served_model_name": "alias", "no_warmup": "true",
		"rag_template_kwargs": "enable_thinking=false", "prompt_salt": "", "shard": "1/4", "start_at": "2026-01-02T15:04:05Z",
		"rag_dataset": "<d&>.jsonl"} {
		if err := rag.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	ce := Default()
	for k, v := range map[string]string{"workload": ConcurrentExactness, "ce_levels": "1,2", "ce_reference_extra_body": `{"a":1}`, "quiet": "true"} {
		if err := ce.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		cfg  *Config
		want string
	}{
		{ldqa, `{"engine_url":"http://127.0.0.1:8000","model":"m","served_model_name":"","workload":"long-doc-qa","kv_cache_volume_gb":100,"tokens_per_gb_kvcache":5000,"seed":42,"output_dir":"/runs/r1","export_csv":false,"export_json":true,"quiet":false,"ignore_eos":false,"warmup_policy":"run","ldqa_document_length":10000,"ldqa_query_per_document":2,"ldqa_shuffle_policy":"random","ldqa_num_inflight_requests":3,"ldqa_max_output_length":128,"prompt_salt":"auto"}`},
		{rag, `{"engine_url":"http://127.0.0.1:8000","model":"","served_model_name":"alias","workload":"rag-qa-quality","kv_cache_volume_gb":100,"tokens_per_gb_kvcache":0,"seed":42,"output_dir":"/runs/r1","export_csv":true,"export_json":true,"quiet":false,"ignore_eos":false,"warmup_policy":"skip","rag_dataset":"\u003cd\u0026\u003e.jsonl","rag_num_samples":50,"rag_max_output_length":1024,"rag_doc_align_tokens":256,"rag_template_kwargs":["enable_thinking=false"],"rag_output":"","prompt_salt":"auto","shard":{"index":1,"count":4,"start_at":"2026-01-02T15:04:05Z"}}`},
		{ce, `{"engine_url":"http://127.0.0.1:8000","model":"","served_model_name":"","workload":"concurrent-exactness","kv_cache_volume_gb":100,"tokens_per_gb_kvcache":0,"seed":42,"output_dir":"/runs/r1","export_csv":true,"export_json":true,"quiet":true,"ignore_eos":false,"warmup_policy":"run","ce_levels":[1,2],"ce_prompts":"","ce_tokens":64,"ce_reps":1,"ce_temperature":0,"ce_alone":false,"ce_reference_extra_body":"{\"a\":1}","prompt_salt":"auto"}`},
	} {
		got, err := json.Marshal(c.cfg.SummaryConfig("http://127.0.0.1:8000", "/runs/r1"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("summary config of %s:\n got %s\nwant %s", c.cfg.Workload(), got, c.want)
		}
	}
}
