// Package kubernetes holds kvbench's Kubernetes example (an Indexed Job
// of shards, its ConfigMap, the results volume and a collector pod) and
// the test that decodes each manifest strictly as the API type it claims
// to be. See README.md.
package kubernetes
