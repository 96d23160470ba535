package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/bench/runs"
	"github.com/kvbench/kvbench/cli"
)

func TestResultsShowShardCount(t *testing.T) {
	list := []runs.Run{{ID: "merged", Shards: 3, Complete: true}, {ID: "plain", Complete: true}}
	var b bytes.Buffer
	if err := cli.WriteRunsJSON(&b, list); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if _, ok := got[1]["shards"]; got[0]["shards"] != 3.0 || ok {
		t.Fatalf("shards: merged %v, plain %v; want 3 and absent", got[0]["shards"], got[1]["shards"])
	}
	b.Reset()
	if err := cli.WriteRunsTable(&b, list); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "ok (3 shards)") || strings.Contains(lines[2], "shard") {
		t.Fatalf("table status:\n%s", b.String())
	}
}
