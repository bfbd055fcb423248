package framework

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/clusters/lifecycle"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/progress"
)

// Shared is what the first Ginkgo process hands the others.
type Shared struct {
	Topology           string `json:"topology"`
	KubernetesVersion  string `json:"kubernetesVersion,omitempty"`
	Kubeconfig         string `json:"kubeconfig"`
	SchedulerMetricURL string `json:"schedulerMetricsURL"`
	// Observations are the suite's pass, by cell key (WithPass), made in
	// PassNamespace, which every process waits gone at the suite's end.
	Observations  map[string]Observation `json:"observations,omitempty"`
	PassNamespace string                 `json:"passNamespace,omitempty"`
}

// Env is one process's view of the cluster under test.
type Env struct {
	Settings  Settings
	Topology  *topology.Topology
	Cluster   *lifecycle.Cluster
	Clientset kubernetes.Interface
	Shared    Shared
	Log       *progress.Logger
	evidence  *evidence
	// deleted are the namespaces Namespace deleted without waiting.
	deletedMu sync.Mutex
	deleted   []string
	// cri holds each node's CRI report (criReports), read once.
	criOnce sync.Once
	cri     map[string]fixtures.Runtime
	criErr  error
}

// BringUp runs on the first process: images (cached), then the cluster.
func BringUp(ctx context.Context, s Settings, log *progress.Logger) ([]byte, error) {
	t, err := s.LoadTopology()
	if err != nil {
		return nil, err
	}
	c, err := lifecycle.BuildAndUp(ctx, s.CacheDir, lifecycle.UpInput{Topology: t, Artifacts: s.Artifacts, UseExisting: s.UseExisting, Log: log})
	if err != nil {
		return nil, err
	}
	url, err := c.SchedulerMetricsURL(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(Shared{Topology: s.Topology, KubernetesVersion: s.KubernetesVersion, Kubeconfig: c.Kubeconfig, SchedulerMetricURL: url})
}

// Attach runs on every process with the first process's Shared.
func Attach(s Settings, data []byte, log *progress.Logger) (*Env, error) {
	var sh Shared
	if err := json.Unmarshal(data, &sh); err != nil {
		return nil, err
	}
	t, err := topology.LoadWith(sh.Topology, sh.KubernetesVersion)
	if err != nil {
		return nil, err
	}
	c, err := lifecycle.Attach(t, sh.Kubeconfig)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(c.Client.RESTConfig())
	if err != nil {
		return nil, err
	}
	e := &Env{Settings: s, Topology: t, Cluster: c, Clientset: cs, Shared: sh, Log: log, evidence: &evidence{}}
	if sh.PassNamespace != "" {
		e.deleted = append(e.deleted, sh.PassNamespace)
	}
	return e, nil
}

// failedMarker records, across Ginkgo processes, that some spec failed.
func failedMarker(artifacts string) string { return filepath.Join(artifacts, ".ndfq-suite-failed") }

// MarkFailed is called when a spec fails, so teardown exports logs.
func MarkFailed(artifacts string) { _ = os.WriteFile(failedMarker(artifacts), []byte("1"), 0o644) }

// TearDown runs on the first process after every spec: logs when anything
// failed, then the cluster goes unless KEEP_CLUSTER.
func TearDown(s Settings, data []byte, log *progress.Logger) error {
	var sh Shared
	if len(data) == 0 || json.Unmarshal(data, &sh) != nil {
		return nil // bring-up failed and cleaned up after itself
	}
	t, err := topology.LoadWith(sh.Topology, sh.KubernetesVersion)
	if err != nil {
		return err
	}
	c, err := lifecycle.Attach(t, sh.Kubeconfig)
	if err != nil {
		return err
	}
	if _, err := os.Stat(failedMarker(s.Artifacts)); err == nil {
		c.CollectLogs(log, s.Artifacts)
		_ = os.Remove(failedMarker(s.Artifacts))
	}
	if s.KeepCluster || s.UseExisting {
		log.Printf("keeping cluster %s (kubeconfig %s)", c.Name, c.Kubeconfig)
		return nil
	}
	return c.Down(log)
}

// SpecInput is what every scenario gets. Topology is read when Ginkgo
// builds the tree (to make one spec per pool); Env only inside specs,
// after the suite has brought the cluster up.
type SpecInput struct {
	Topology *topology.Topology
	Env      *Env
}

// Check fails the spec where the suite gave no cluster.
func (in SpecInput) Check(spec string) {
	GinkgoHelper()
	Expect(in.Topology).NotTo(BeNil(), "%s: input.Topology can't be nil", spec)
	Expect(in.Env).NotTo(BeNil(), "%s: input.Env can't be nil", spec)
}
