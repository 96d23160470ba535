package kubernetes

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kvbench/kvbench/cli"
	"github.com/kvbench/kvbench/config"
)

// decode reads a manifest strictly (an unknown or misspelt field is an
// error) into the API type it claims and checks its apiVersion and kind.
func decode(t *testing.T, file, apiVersion, kind string, into any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s is not a valid %s: %v", file, kind, err)
	}
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.APIVersion != apiVersion || meta.Kind != kind {
		t.Fatalf("%s claims %s %s, want %s %s", file, meta.APIVersion, meta.Kind, apiVersion, kind)
	}
}

func TestManifests(t *testing.T) {
	var job batchv1.Job
	var cm corev1.ConfigMap
	var pvc corev1.PersistentVolumeClaim
	var collect corev1.Pod
	decode(t, "job.yaml", "batch/v1", "Job", &job)
	decode(t, "configmap.yaml", "v1", "ConfigMap", &cm)
	decode(t, "pvc.yaml", "v1", "PersistentVolumeClaim", &pvc)
	decode(t, "collect.yaml", "v1", "Pod", &collect)

	// An Indexed Job of N pods that all run at once.
	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode %v, want Indexed", spec.CompletionMode)
	}
	if spec.Completions == nil || spec.Parallelism == nil {
		t.Fatal("completions and parallelism must be set")
	}
	if *spec.Completions != *spec.Parallelism || *spec.Completions < 2 {
		t.Fatalf("completions %d and parallelism %d must be the same N > 1", *spec.Completions, *spec.Parallelism)
	}
	n := int(*spec.Completions)
	if spec.BackoffLimit == nil || *spec.BackoffLimit != 0 {
		t.Fatal("a shard must not be retried after the common start")
	}
	pod := spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if !strings.HasPrefix(c.Image, "ghcr.io/kvbench/kvbench:") {
		t.Fatalf("image %s is not the release image", c.Image)
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Fatal("the shards must run as a non-root user")
	}

	// The args are a kvbench run that the real flag parser accepts, with
	// the variables Kubernetes expands.
	if len(c.Args) == 0 || c.Args[0] != "run" {
		t.Fatalf("args %v do not start with run", c.Args)
	}
	arg := func(flag string) string {
		i := slices.Index(c.Args, flag)
		if i < 0 || i+1 >= len(c.Args) {
			t.Fatalf("args %v have no %s value", c.Args, flag)
		}
		return c.Args[i+1]
	}
	if got, want := arg("--shard"), "$(JOB_COMPLETION_INDEX)/"+itoa(n); got != want {
		t.Fatalf("--shard %s, want %s (N = completions)", got, want)
	}
	if arg("--start-at") != "$(START_AT)" || arg("--engine-url") != "$(ENGINE_URL)" {
		t.Fatalf("args %v: --start-at and --engine-url come from the ConfigMap", c.Args)
	}
	if !slices.Contains(c.Args, "--no-interactive") {
		t.Fatal("a pod has no terminal: --no-interactive")
	}
	expanded := make([]string, len(c.Args)-1)
	for i, a := range c.Args[1:] {
		a = strings.ReplaceAll(a, "$(JOB_COMPLETION_INDEX)", itoa(n-1))
		a = strings.ReplaceAll(a, "$(START_AT)", "2030-01-01T00:00:00Z")
		expanded[i] = strings.ReplaceAll(a, "$(ENGINE_URL)", "http://engine:8000")
	}
	run := cli.NewRunCommand()
	if err := run.ParseFlags(expanded); err != nil {
		t.Fatalf("kvbench run rejects the Job's args %v: %v", expanded, err)
	}
	if s, err := config.ParseShard(strings.ReplaceAll(arg("--shard"), "$(JOB_COMPLETION_INDEX)", itoa(n-1))); err != nil || s.Count != n {
		t.Fatalf("the last pod's --shard: %v %v", s, err)
	}

	// Every variable the args use is defined, from where it should be.
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if e := env["JOB_COMPLETION_INDEX"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil ||
		e.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Fatalf("JOB_COMPLETION_INDEX must come from the completion-index annotation: %+v", e)
	}
	for _, name := range []string{"ENGINE_URL", "START_AT"} {
		e := env[name]
		if e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil || e.ValueFrom.ConfigMapKeyRef.Name != cm.Name {
			t.Fatalf("%s must come from ConfigMap %s: %+v", name, cm.Name, e)
		}
		if _, ok := cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]; !ok {
			t.Fatalf("%s reads key %s, which ConfigMap %s does not have", name, e.ValueFrom.ConfigMapKeyRef.Key, cm.Name)
		}
	}

	// --config is the ConfigMap's config.json; --output-dir is the
	// results volume.
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	cfgVol := volumes["config"]
	if cfgVol.ConfigMap == nil || cfgVol.ConfigMap.Name != cm.Name || filepath.Join(mounts["config"], "config.json") != arg("--config") {
		t.Fatalf("--config %s is not ConfigMap %s's config.json mounted at %s", arg("--config"), cm.Name, mounts["config"])
	}
	res := volumes["results"]
	if res.PersistentVolumeClaim == nil || res.PersistentVolumeClaim.ClaimName != pvc.Name || mounts["results"] != arg("--output-dir") {
		t.Fatalf("--output-dir %s is not claim %s mounted", arg("--output-dir"), pvc.Name)
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Fatal("the results volume is written by every pod at once: ReadWriteMany")
	}
	cv := collect.Spec.Volumes
	if len(cv) != 1 || cv[0].PersistentVolumeClaim == nil || cv[0].PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Fatalf("the collector must mount claim %s", pvc.Name)
	}

	// The ConfigMap's config.json is a kvbench config the shards accept.
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(cm.Data["config.json"]), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	if err := cfg.LoadJSON(path); err != nil {
		t.Fatalf("configmap.yaml config.json: %v", err)
	}
	cfg.Set("shard", itoa(n-1)+"/"+itoa(n))
	cfg.Set("start_at", cm.Data["start-at"]) // the Job's --start-at, which derives the run key
	if err := cfg.Validate(); err != nil {
		t.Fatalf("configmap.yaml config.json as shard %d/%d: %v", n-1, n, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
