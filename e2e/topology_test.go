//go:build e2e

package e2e

import (
	"context"

	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/poll"
	"github.com/ndfq/ndfq/probes"
)

// The topology is read at tree construction so that each pool gets its own
// spec; the cluster itself is only touched inside the specs.
var suiteTopology = func() *topology.Topology {
	t, err := settings.LoadTopology()
	if err != nil {
		panic(err) // an invalid topology must stop the run before anything is provisioned
	}
	return t
}()

// poolsOf lists the control-plane pool and the worker pools as pools.
func poolsOf(t *topology.Topology) []topology.Pool {
	pools := []topology.Pool{{Name: topology.ControlPlanePool, Count: 1, Version: t.ControlPlane.Version, Kubelet: t.ControlPlane.Kubelet}}
	return append(pools, t.Workers...)
}

func nodesOfPool(ctx SpecContext, pool string) []corev1.Node {
	list, err := env.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: topology.PoolLabel + "=" + pool})
	Expect(err).NotTo(HaveOccurred())
	return list.Items
}

func describeIntent(enabled, known bool) string {
	switch {
	case !known:
		return "unknown to this component"
	case enabled:
		return "on"
	}
	return "off"
}

func matchesIntent(g probes.Gates, enabled, known bool) bool {
	if !known {
		return !g.Known(fixtures.NodeDeclaredFeatures)
	}
	return g.Known(fixtures.NodeDeclaredFeatures) && g.Enabled(fixtures.NodeDeclaredFeatures) == enabled
}

var _ = Describe("The live cluster is the topology", Label("topology"), func() {
	t := suiteTopology

	It(fmt.Sprintf("has all %d nodes of topology %s registered and Ready", t.NodeCount(), t.Name), func(ctx SpecContext) {
		nodes, err := env.Cluster.Nodes(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(nodes).To(HaveLen(t.NodeCount()), "nodes registered")
		for _, n := range nodes {
			Expect(probes.NodeReady(n)).To(BeTrue(), "node %s (pool %s) is not Ready: %v", n.Name, n.Labels[topology.PoolLabel], n.Status.Conditions)
		}
	})

	for _, pool := range poolsOf(t) {
		pool := pool
		It(fmt.Sprintf("runs kubelet %s on each of the %d node(s) of pool %s", pool.PoolVersion(), pool.Count, pool.Name), func(ctx SpecContext) {
			nodes := nodesOfPool(ctx, pool.Name)
			Expect(nodes).To(HaveLen(pool.Count), "nodes labelled %s=%s", topology.PoolLabel, pool.Name)
			for _, n := range nodes {
				Expect(n.Status.NodeInfo.KubeletVersion).To(Equal(pool.PoolVersion()), "kubelet version of node %s (pool %s)", n.Name, pool.Name)
			}
		})
	}

	minor := fixtures.MinorOf(t.ControlPlane.Version)
	for _, c := range []struct {
		name string
		spec topology.Component
		read func(SpecContext) (probes.Gates, error)
	}{
		{"kube-apiserver", t.ControlPlane.APIServer, func(ctx SpecContext) (probes.Gates, error) {
			return probes.APIServerGates(ctx, env.Clientset)
		}},
		{"kube-scheduler", t.ControlPlane.Scheduler, func(ctx SpecContext) (probes.Gates, error) {
			return probes.SchedulerGates(ctx, env.Cluster.Client.RESTConfig(), env.Shared.SchedulerMetricURL)
		}},
	} {
		c := c
		gateMinor := topology.GateMinor(minor, c.spec.ExtraArgs)
		enabled, known := fixtures.ExpectedGate(gateMinor, c.spec.FeatureGates, fixtures.NodeDeclaredFeatures)
		It(fmt.Sprintf("%s %s reports NodeDeclaredFeatures %s in kubernetes_feature_enabled", c.name, t.ControlPlaneVersion(), describeIntent(enabled, known)), func(ctx SpecContext) {
			gates := readGates(ctx, c.name, c.read)
			Expect(matchesIntent(gates, enabled, known)).To(BeTrue(),
				"%s reports NodeDeclaredFeatures %s; topology %s intends %s", c.name, gates.Describe(fixtures.NodeDeclaredFeatures), t.Name, describeIntent(enabled, known))
		})
	}

	for _, pool := range poolsOf(t) {
		pool := pool
		enabled, known := fixtures.ExpectedGate(fixtures.MinorOf(pool.Version), pool.Kubelet.FeatureGates, fixtures.NodeDeclaredFeatures)
		It(fmt.Sprintf("every kubelet of pool %s (%s) reports NodeDeclaredFeatures %s", pool.Name, pool.PoolVersion(), describeIntent(enabled, known)), func(ctx SpecContext) {
			nodes := nodesOfPool(ctx, pool.Name)
			Expect(nodes).To(HaveLen(pool.Count))
			for _, n := range nodes {
				gates := readGates(ctx, "kubelet on "+n.Name, func(ctx SpecContext) (probes.Gates, error) {
					return probes.KubeletGates(ctx, env.Clientset, n.Name)
				})
				Expect(matchesIntent(gates, enabled, known)).To(BeTrue(),
					"kubelet on %s (pool %s, %s) reports NodeDeclaredFeatures %s; topology intends %s", n.Name, pool.Name, pool.PoolVersion(), gates.Describe(fixtures.NodeDeclaredFeatures), describeIntent(enabled, known))
			}
		})
	}
})

// readGates reads a component's gates, retrying (wait-metrics) while its
// metrics endpoint is not answering yet.
func readGates(ctx SpecContext, what string, read func(SpecContext) (probes.Gates, error)) probes.Gates {
	var gates probes.Gates
	Expect(poll.Until(ctx, "wait-metrics", what+" metrics", func(context.Context) (bool, string, error) {
		g, err := read(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		gates = g
		return true, "", nil
	})).To(Succeed())
	return gates
}
