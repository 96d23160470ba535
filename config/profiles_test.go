package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProfilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KVBENCH_CONFIG_DIR", dir)

	if list, err := ListProfiles(); err != nil || len(list) != 0 {
		t.Fatalf("empty store: %v %v", list, err)
	}
	c := Default()
	for k, v := range map[string]string{
		"workload": LongDocQA, "engine_url": "http://gpu-box:8000", "lmcache_url": "http://gpu-box:9000",
		"api_key_env": "MY_KEY", "kv_cache_volume": "2", "ldqa_document_length": "3000", "seed": "7",
	} {
		if err := c.SetString(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := SaveProfile("gpu-a", c); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "profiles", "gpu-a.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(c.ExportJSON()) {
		t.Errorf("profile is not the export format:\n%s", data)
	}
	for _, secret := range []string{"gpu-box", "MY_KEY", "engine_url", "lmcache_url", "api_key"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("profile holds %q:\n%s", secret, data)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "profiles", ".*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	got, err := LoadProfile("gpu-a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Workload() != LongDocQA || got.Int("ldqa_document_length") != 3000 || got.Float("kv_cache_volume") != 2 || got.Int("seed") != 7 {
		t.Errorf("loaded %s", got.ExportJSON())
	}
	if got.String("engine_url") != "" {
		t.Errorf("engine URL came back from a profile: %q", got.String("engine_url"))
	}

	list, err := ListProfiles()
	if err != nil || len(list) != 1 || list[0].Name != "gpu-a" || list[0].Workload != LongDocQA || list[0].Err != nil {
		t.Fatalf("list: %+v %v", list, err)
	}

	// Saving again replaces it.
	c.SetString("seed", "8")
	if err := SaveProfile("gpu-a", c); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadProfile("gpu-a"); got.Int("seed") != 8 {
		t.Errorf("seed after overwrite = %d", got.Int("seed"))
	}

	if err := DeleteProfile("gpu-a"); err != nil {
		t.Fatal(err)
	}
	if list, _ := ListProfiles(); len(list) != 0 {
		t.Errorf("after delete: %+v", list)
	}
	if err := DeleteProfile("gpu-a"); err == nil {
		t.Error("deleting a missing profile succeeded")
	}
}

func TestProfileNames(t *testing.T) {
	p := Profiles{t.TempDir()}
	c := Default()
	c.SetString("workload", RandomPrefill)
	for _, bad := range []string{"", ".hidden", "-x", "a/b", "../up", "sp ace", strings.Repeat("x", 65)} {
		if err := p.Save(bad, c); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if err := p.Save("ok_1.2-3", c); err != nil {
		t.Error(err)
	}
	if err := p.Save("noworkload", Default()); err == nil {
		t.Error("a profile without a workload was saved")
	}
}

func TestProfileListShowsBrokenFile(t *testing.T) {
	p := Profiles{t.TempDir()}
	os.MkdirAll(p.ProfilesDir(), 0o755)
	os.WriteFile(filepath.Join(p.ProfilesDir(), "broken.json"), []byte(`{"nope": 1}`), 0o644)
	os.WriteFile(filepath.Join(p.ProfilesDir(), "notes.txt"), []byte(`x`), 0o644)
	list, err := p.List()
	if err != nil || len(list) != 1 || list[0].Name != "broken" || list[0].Err == nil {
		t.Fatalf("list: %+v %v", list, err)
	}
	if !strings.Contains(list[0].Err.Error(), "nope") {
		t.Errorf("error does not name the key: %v", list[0].Err)
	}
	if _, err := p.Load("broken"); err == nil {
		t.Error("broken profile loaded")
	}
}
