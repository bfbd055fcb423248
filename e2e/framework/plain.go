package framework

import (
	"context"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/lifecycle"
	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/sh"
	"github.com/ndfq/ndfq/internal/wait"
)

// PlainCluster is a second cluster, made from a plain kind config, beside
// the one under test: what a user of kind has, for the probe to qualify.
type PlainCluster struct {
	*lifecycle.Cluster
	Clientset kubernetes.Interface
}

// UpPlainCluster brings one up from these node images (the first is the
// control plane's) and deletes it at cleanup, after its logs are kept
// in the spec's artifacts when the spec failed.
func (e *Env) UpPlainCluster(ctx context.Context, name string, images ...string) *PlainCluster {
	GinkgoHelper()
	return e.UpCluster(ctx, kindconfig.Plain(name, images[0], images[1:]...))
}

// UpCluster brings up a second cluster from a kind config and deletes it
// at cleanup, after its logs are kept when the spec failed.
func (e *Env) UpCluster(ctx context.Context, cfg *v1alpha4.Cluster) *PlainCluster {
	GinkgoHelper()
	name := cfg.Name
	dir := filepath.Join(e.Settings.Artifacts, name)
	// Its nodes run the topology's node images: where the topology's
	// kube-proxy is deployed by ndfq, so is the plain cluster's.
	var proxy kubeversion.Version
	if v, ok := e.Topology.DeploysKubeProxy(); ok {
		proxy = v
	}
	c, err := lifecycle.UpPlain(ctx, cfg, proxy, dir, e.Log)
	Expect(err).NotTo(HaveOccurred(), "bring up %s from a plain kind config", name)
	DeferCleanup(func() {
		if CurrentSpecReport().Failed() {
			c.CollectLogs(e.Log, dir)
		}
		Expect(c.Down(e.Log)).To(Succeed())
	})
	rc := rest.CopyConfig(c.Client.RESTConfig())
	rc.QPS, rc.Burst = 200, 400 // the scale spec writes thousands of nodes
	cs, err := kubernetes.NewForConfig(rc)
	Expect(err).NotTo(HaveOccurred())
	// Ready is not yet heartbeating: a kubelet that has just joined makes
	// its Lease a moment later, and a node without one has no known
	// freshness (the probe says INCOMPLETE for it).
	Expect(wait.Until(ctx, wait.Nodes, "a Lease for every node of "+name, func(ctx context.Context) (bool, string, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, n := range nodes.Items {
			if _, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, n.Name, metav1.GetOptions{}); err != nil {
				return false, n.Name + ": " + err.Error(), nil
			}
		}
		return true, "", nil
	})).To(Succeed())
	return &PlainCluster{Cluster: c, Clientset: cs}
}

// NodeImage is the kind node image a node of the cluster under test runs.
func (e *Env) NodeImage(ctx context.Context, node string) string {
	GinkgoHelper()
	out, err := sh.Output(ctx, "docker", "inspect", "-f", "{{.Config.Image}}", node)
	Expect(err).NotTo(HaveOccurred())
	return strings.TrimSpace(string(out))
}
