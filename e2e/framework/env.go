// Package framework is what every ndfq suite shares: the run's settings,
// bringing the topology up once per suite, one way to make a namespace,
// and one way to dump artifacts when a spec fails. It also holds the
// primitives only the suites use, beside the probes the CLI shares.
package framework

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
)

// Settings are the run's knobs, read from the environment as the Makefile
// passes them (the same names as kind / Cluster API e2e users know).
type Settings struct {
	Topology string // TOPOLOGY: shipped name or file
	// KubernetesVersion (KUBERNETES_VERSION) replaces the topology's control plane.
	KubernetesVersion string
	Artifacts         string // ARTIFACTS: JUnit, reports, kubeconfig, logs
	KeepCluster       bool   // KEEP_CLUSTER: leave the cluster running after the suite
	UseExisting       bool   // USE_EXISTING_CLUSTER: reuse a running cluster of the topology
	CacheDir          string // NDFQ_CACHE: image build cache
}

// LoadTopology is the topology under test, with KUBERNETES_VERSION applied.
func (s Settings) LoadTopology() (*topology.Topology, error) {
	return topology.LoadWith(s.Topology, s.KubernetesVersion)
}

// SettingsFromEnv reads the knobs with their defaults.
func SettingsFromEnv() Settings {
	s := Settings{
		Topology:          getenv("TOPOLOGY", topology.DefaultName),
		KubernetesVersion: os.Getenv("KUBERNETES_VERSION"),
		Artifacts:         getenv("ARTIFACTS", "_artifacts"),
		KeepCluster:       boolEnv("KEEP_CLUSTER"),
		UseExisting:       boolEnv("USE_EXISTING_CLUSTER"),
		CacheDir:          nodeimage.DefaultCacheDir(),
	}
	if abs, err := filepath.Abs(s.Artifacts); err == nil {
		s.Artifacts = abs
	}
	return s
}

func getenv(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func boolEnv(k string) bool {
	b, _ := strconv.ParseBool(os.Getenv(k))
	return b
}

// Bounds of the suite-level nodes: a cold image build is part of bring-up
// when `make e2e` did not run `ndfq images build` first.
const (
	BringUpTimeout  = 75 * time.Minute
	TearDownTimeout = 10 * time.Minute
)
