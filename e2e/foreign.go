//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// ForeignClusterSpecInput is the input of ForeignClusterSpec.
type ForeignClusterSpecInput struct{ framework.SpecInput }

// ForeignClusterSpec runs the real ndfq binary on a cluster ndfq did not
// shape: a plain kind config of the topology's control-plane node image
// and its oldest kubelet's, every gate at its default, no pool labels and
// no toolbox image on any node. With no flag but the kubeconfig the probe
// must find its pools, run pods that need no shell, and give the verdict:
// GO, then HOLD naming the node once a declaration is forged there.
func ForeignClusterSpec(_ context.Context, inputGetter func() ForeignClusterSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("ForeignClusterSpec"); e = in.Env })

	cp := controlPlaneKubelet(t)
	oldest := framework.OldestPool(t.Workers)
	old := fixtures.Kubelet{Version: oldest.PoolVersion().String()}
	cpDesc := t.ControlPlaneVersion().String()
	if cp.Version != cpDesc {
		cpDesc += " over kubelet " + cp.Version // a variant image
	}
	claim := fmt.Sprintf("on a plain kind cluster (control plane %s, a %s worker, default gates, no pool labels, no toolbox image) says GO with pools by kubelet version, then HOLD naming the worker whose declaration is forged", cpDesc, old.Version)
	switch why := refusableAtDefaults(t); {
	case why != "":
		notApplicable(claim, why)
		return
	case old.Declares(restartAll):
		notApplicable(claim, fmt.Sprintf("the oldest kubelet, %s, declares %s at its defaults: nothing to refuse", old.Version, restartAll))
		return
	}
	It(claim, Label("plain-cluster"), func(ctx SpecContext) {
		cpPool, _ := framework.PoolWhere(t.Pools(), framework.ControlPlane)
		cpNode, _ := e.PoolNode(ctx, cpPool)
		oldNode, _ := e.PoolNode(ctx, oldest)
		By("bringing up a plain kind cluster of the same node images")
		c := e.UpPlainCluster(ctx, "ndfq-plain", e.NodeImage(ctx, cpNode), e.NodeImage(ctx, oldNode))
		nodes, err := c.Nodes(ctx)
		Expect(err).NotTo(HaveOccurred())
		var worker string
		for _, n := range nodes {
			Expect(n.Labels).NotTo(HaveKey(HavePrefix("ndfq.io/")), "a plain cluster has no ndfq labels")
			kn, err := c.KindNode(n.Name)
			Expect(err).NotTo(HaveOccurred())
			Expect(kn.Command("crictl", "rmi", nodeimage.TestImage).Run()).To(Succeed(), "remove the toolbox image from %s", n.Name)
			if n.Status.NodeInfo.KubeletVersion == old.Version {
				worker = n.Name
			}
		}
		Expect(worker).NotTo(BeEmpty())

		By("probing it with nothing but its kubeconfig")
		probe := func() (int, verdict.Verdict) {
			code, out := framework.RunNDFQ(ctx, "probe", "--kubeconfig", c.Kubeconfig, "-o", "json")
			return code, framework.ParseVerdict(code, out)
		}
		code, g := probe()
		Expect(code).To(Equal(0), "%s %v %v", g.Outcome, g.Reasons, g.Unchecked)
		Expect(g.PoolLabel.Source).To(Equal("none"))
		Expect(g.Image).To(HavePrefix("registry.k8s.io/pause:"))
		oldPool := probes.Unlabelled + "@" + old.Version
		var pools []string
		for _, p := range g.Pools {
			pools = append(pools, p.Pool)
			if p.Pool == oldPool {
				Expect(p.Refusals).To(BeNumerically(">", 0), "the %s worker lacks %s: its probe pod must be refused", old.Version, restartAll)
			}
		}
		Expect(pools).To(ConsistOf(probes.Unlabelled+"@"+cp.Version, oldPool))
		Expect(g.Fingerprint).To(HaveKeyWithValue("kube-scheduler", verdict.SchedulerSeenRefusing))

		By("forging a declaration on the " + old.Version + " worker")
		Expect(framework.PatchDeclared(ctx, c.Clientset, worker, []string{restartAll})).To(Succeed())
		code, g = probe()
		Expect(code).To(Equal(1), "%s %v", g.Outcome, g.Reasons)
		Expect(g.Holds(verdict.DeclaredButNotEnabled, oldPool, worker)).To(BeTrue(), "%v", g.Reasons)
		framework.Record(report.Observation{Kind: report.KindMeasure, Text: fmt.Sprintf("ndfq probe on a plain kind cluster (%s + %s, no labels, no toolbox): GO, then HOLD declared-but-not-enabled on %s after a forgery", cp.Version, old.Version, worker)})
	})
}

// refusableAtDefaults says why a plain cluster of this control plane, every
// gate at its default, cannot show the scheduler's plugin refusing a pod
// that needs RestartAllContainersOnContainerExits ("" when it can): the
// apiserver must keep declarations and the field, and the control-plane
// node's kubelet must declare the feature somewhere to compare against.
func refusableAtDefaults(t *topology.Topology) string {
	cp := controlPlaneKubelet(t)
	api := fixtures.EffectiveGates(framework.CPMinor(t), nil)
	if !cp.Declares(restartAll) || !api[fixtures.NodeDeclaredFeatures] || !api[restartAll] {
		return fmt.Sprintf("a %s control plane (kubelet %s) at its defaults does not keep declarations or the %s field: no pod can be refused for it, so the scheduler's plugin cannot be seen at work", framework.CPMinor(t), cp.Version, restartAll)
	}
	return ""
}

// controlPlaneKubelet is the control-plane nodes' kubelet at its defaults
// (an older one than the control plane on a variant image).
func controlPlaneKubelet(t *topology.Topology) fixtures.Kubelet {
	return fixtures.Kubelet{Version: t.ControlPlaneKubeletVersion().String()}
}
