//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// TopologySpecInput is the input of TopologySpec.
type TopologySpecInput struct{ framework.SpecInput }

// TopologySpec proves the live cluster is the topology: nodes, kubelet
// versions, and the NodeDeclaredFeatures gate every component reports.
func TopologySpec(_ context.Context, inputGetter func() TopologySpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("TopologySpec"); e = in.Env })

	It(fmt.Sprintf("has all %d nodes of topology %s registered and Ready", t.NodeCount(), t.Name), func(ctx SpecContext) {
		nodes, err := e.Cluster.Nodes(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(nodes).To(HaveLen(t.NodeCount()), "nodes registered")
		for _, n := range nodes {
			Expect(wait.NodeReady(n)).To(BeTrue(), "node %s (pool %s) is not Ready: %v", n.Name, n.Labels[topology.PoolLabel], n.Status.Conditions)
		}
	})

	for _, pool := range t.Pools() {
		It(fmt.Sprintf("runs kubelet %s on each of the %d node(s) of pool %s", pool.PoolVersion(), pool.Count, pool.Name), func(ctx SpecContext) {
			nodes := e.NodesOfPool(ctx, pool.Name)
			Expect(nodes).To(HaveLen(pool.Count), "nodes of pool %s", pool.Name)
			for _, n := range nodes {
				Expect(n.Status.NodeInfo.KubeletVersion).To(Equal(pool.PoolVersion().String()), "kubelet version of node %s (pool %s)", n.Name, pool.Name)
			}
		})
	}

	It(fmt.Sprintf("serves kube-apiserver %s", t.ControlPlaneVersion()), func(ctx SpecContext) {
		v, err := e.Clientset.Discovery().ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(v.GitVersion).To(Equal(t.ControlPlaneVersion().String()), "the apiserver's /version")
	})

	proxy, byNDFQ := t.DeploysKubeProxy()
	how := "kubeadm's addon"
	if byNDFQ {
		how = "deployed by ndfq in place of kubeadm's own"
	}
	It(fmt.Sprintf("runs kube-proxy %s (%s) available on each of the %d nodes", proxy, how, t.NodeCount()), func(ctx SpecContext) {
		e.ExpectKubeProxy(ctx, proxy, t.NodeCount())
	})

	for _, pool := range t.Pools() {
		rel := pool.RuntimeRelease()
		It(fmt.Sprintf("every node of pool %s runs %s, whose CRI reports %s (%s)", pool.Name, rel.Version, framework.DescribeRuntime(rel.Reports), rel.Source), func(ctx SpecContext) {
			nodes := e.NodesOfPool(ctx, pool.Name)
			Expect(nodes).To(HaveLen(pool.Count))
			for _, n := range nodes {
				Expect(n.Status.NodeInfo.ContainerRuntimeVersion).To(Equal(rel.Version), "runtime of node %s (pool %s)", n.Name, pool.Name)
				Expect(e.CRIReport(n.Name)).To(Equal(rel.Reports), "what the runtime of %s (pool %s, %s) reports over the CRI, against the oracle's %s", n.Name, pool.Name, rel.Version, rel.Source)
			}
		})
	}

	cells := claims.Matrix(t)
	for _, c := range []struct {
		name, pool string
		read       func(context.Context) (probes.Gates, error)
	}{
		{framework.KubeAPIServer, claims.APIServerComponent, func(ctx context.Context) (probes.Gates, error) { return probes.APIServerGates(ctx, e.Clientset) }},
		{framework.KubeScheduler, claims.SchedulerComponent, func(ctx context.Context) (probes.Gates, error) {
			return framework.SchedulerGates(ctx, e.Cluster.Client.RESTConfig(), e.Shared.SchedulerMetricURL)
		}},
	} {
		for _, cell := range claims.OfPool(cells, claims.ControlPlaneGate, c.pool) {
			cellIt(cell, fmt.Sprintf("%s %s reports %s %s in kubernetes_feature_enabled", c.name, t.ControlPlaneVersion(), cell.Feature, cell.Expect), func(ctx SpecContext) {
				gates := framework.ReadGates(ctx, c.name, c.read)
				seen := claims.GateState(gates.Enabled(cell.Feature), gates.Known(cell.Feature))
				framework.RecordCell(cell, "", seen, gates.Describe(cell.Feature))
				Expect(seen).To(Equal(cell.Expect), "%s reports %s %s; topology %s plans it %s", c.name, cell.Feature, gates.Describe(cell.Feature), t.Name, cell.Expect)
			})
		}
	}

	for _, pool := range t.Pools() {
		intent := pool.Intent()
		want := claims.GateState(fixtures.ExpectedGate(intent.Minor(), intent.Gates, fixtures.NodeDeclaredFeatures))
		It(fmt.Sprintf("every kubelet of pool %s (%s) reports NodeDeclaredFeatures %s", pool.Name, pool.PoolVersion(), want), func(ctx SpecContext) {
			nodes := e.NodesOfPool(ctx, pool.Name)
			Expect(nodes).To(HaveLen(pool.Count))
			for _, n := range nodes {
				gates := framework.ReadGates(ctx, "kubelet on "+n.Name, func(ctx context.Context) (probes.Gates, error) {
					return probes.KubeletGates(ctx, e.Clientset, n.Name)
				})
				seen := claims.GateState(gates.Enabled(fixtures.NodeDeclaredFeatures), gates.Known(fixtures.NodeDeclaredFeatures))
				Expect(seen).To(Equal(want),
					"kubelet on %s (pool %s, %s) reports NodeDeclaredFeatures %s; topology intends %s", n.Name, pool.Name, pool.PoolVersion(), gates.Describe(fixtures.NodeDeclaredFeatures), want)
			}
		})
	}
}
