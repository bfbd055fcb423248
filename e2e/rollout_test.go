//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/poll"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// stageProbe runs the probe workload in-process and applies the stop conditions.
func stageProbe(ctx SpecContext, stage string) report.Gate {
	run, err := probes.Probe(ctx, probes.RunInput{
		Config: env.Cluster.Client.RESTConfig(), PoolLabel: topology.PoolLabel, NamespacePrefix: "ndfq-stage",
		SchedulerURL: env.Shared.SchedulerMetricURL, Freshness: report.DefaultThresholds.Freshness,
		Progress: func(format string, args ...any) { GinkgoWriter.Printf(format+"\n", args...) },
	})
	Expect(err).NotTo(HaveOccurred())
	g := report.Evaluate(run, report.DefaultThresholds)
	var conds []string
	for _, r := range g.Reasons {
		conds = append(conds, r.String())
	}
	GinkgoWriter.Printf("stage %q: %s\n  %s\n", stage, g.Verdict, strings.Join(conds, "\n  "))
	record(report.Observation{Kind: report.KindMeasure, Text: fmt.Sprintf("rollout stage %s: %s %s", stage, g.Verdict, strings.Join(conditionsOf(g), ","))})
	for _, p := range run.Placements {
		if p.Feature == "" {
			Expect(p.Bound).To(BeTrue(), "stage %s: a control pod was refused on %s: %s", stage, p.Pool, p.Message)
		}
	}
	return g
}

// conditionsOf is the sorted set of stop conditions that fired.
func conditionsOf(g report.Gate) []string {
	set := map[string]bool{}
	for _, r := range g.Reasons {
		set[r.Condition] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// setComponentGates restarts a control-plane component with gates and
// waits until its metrics report them. Both components must answer again
// too: a restarted apiserver can make the scheduler restart or refuse its
// metrics for a while, and the next stage reads both.
func setComponentGates(ctx SpecContext, component string, gates map[string]bool) {
	setComponentFlags(ctx, component, gates, nil)
}

// setComponentFlags is setComponentGates that also sets (or, with "",
// removes) other flags of the component in the same restart.
func setComponentFlags(ctx SpecContext, component string, gates map[string]bool, args map[string]string) {
	cp := poolsOf(suiteTopology)[0]
	_, node := poolNode(ctx, cp)
	_, err := surgery.SetStaticPodFlags(node, component, gates, args)
	Expect(err).NotTo(HaveOccurred())
	want := componentGateAfter(component, gates, args)
	restartedScheduler := false
	Expect(poll.Until(ctx, "wait-metrics", fmt.Sprintf("%s to report %s", component, surgery.FormatGatesOrNone(gates)), func(ctx context.Context) (bool, string, error) {
		api, err := probes.APIServerGates(ctx, env.Clientset)
		if err != nil {
			return false, err.Error(), nil
		}
		sched, err := probes.SchedulerGates(ctx, env.Cluster.Client.RESTConfig(), env.Shared.SchedulerMetricURL)
		if err != nil && strings.Contains(err.Error(), "system:anonymous") && !restartedScheduler {
			// Finding F6: a scheduler that restarted while the apiserver was
			// down serves without authentication until it is restarted.
			restartedScheduler = true
			record(report.Observation{Kind: report.KindFinding, Pool: cp.Name, OK: true,
				Text: "F6: after a kube-apiserver restart the kube-scheduler, restarted while the apiserver was down, answered 403 system:anonymous on /metrics; restarting it again fixed it"})
			if err := surgery.RestartStaticPodContainer(node, "kube-scheduler"); err != nil {
				return false, "", err
			}
		}
		if err != nil {
			return false, err.Error(), nil
		}
		g := sched
		if component == "kube-apiserver" {
			g = api
		}
		for name, v := range gates {
			if g.Known(name) && g.Enabled(name) != v {
				return false, g.Describe(name), nil
			}
		}
		return g.Enabled(fixtures.NodeDeclaredFeatures) == want, g.Describe(fixtures.NodeDeclaredFeatures), nil
	})).To(Succeed())
}

// componentGateAfter is the NodeDeclaredFeatures value the oracle expects of
// a control-plane component restarted with gates and args over the
// topology's own flags (an emulated version moves the gate's minor).
func componentGateAfter(component string, gates map[string]bool, args map[string]string) bool {
	c := suiteTopology.ControlPlane.Scheduler
	if component == "kube-apiserver" {
		c = suiteTopology.ControlPlane.APIServer
	}
	flags := maps.Clone(c.ExtraArgs)
	if flags == nil {
		flags = map[string]string{}
	}
	for k, v := range args {
		if v == "" {
			delete(flags, k)
		} else {
			flags[k] = v
		}
	}
	on, _ := fixtures.ExpectedGate(topology.GateMinor(cpMinor, flags), gates, fixtures.NodeDeclaredFeatures)
	return on
}

// setPoolKubelets restarts every node of a pool with gates and waits until
// each reports them and declares what the oracle says for them.
func setPoolKubelets(ctx SpecContext, pool topology.Pool, gates map[string]bool, clear bool) {
	minor := fixtures.MinorOf(pool.Version)
	for _, d := range declarationsOfPool(ctx, pool) {
		node, err := env.Cluster.KindNode(d.Node)
		Expect(err).NotTo(HaveOccurred())
		_, err = surgery.SetKubeletGates(node, gates)
		Expect(err).NotTo(HaveOccurred())
		waitKubelet(ctx, d.Node, "", gates)
		if clear {
			Expect(patchDeclared(ctx, d.Node, nil)).To(Succeed())
		}
		if want := fixtures.Expected(minor, fixtures.EffectiveGates(minor, gates), fixtures.Runtime{}); want != nil {
			waitDeclared(ctx, d.Node, want)
		}
	}
}

var _ = Describe("Staged rollout of NodeDeclaredFeatures into a running fleet", ndf, disruptive, Serial, Ordered, func() {
	// The rollout starts where the feature is off everywhere and may be turned on.
	if apiServerIntends(fixtures.NodeDeclaredFeatures) || schedulerIntends() || gateLocked(cpMinor, fixtures.NodeDeclaredFeatures) {
		return
	}
	var canary topology.Pool
	var rest, legacy []topology.Pool
	for _, p := range suiteTopology.Workers {
		minor := fixtures.MinorOf(p.Version)
		switch {
		case kubeletPublishes(p):
			return // the topology is already part-way
		case gateLocked(minor, fixtures.NodeDeclaredFeatures):
			legacy = append(legacy, p)
		case canary.Name == "":
			canary = p
		default:
			rest = append(rest, p)
		}
	}
	if canary.Name == "" {
		return
	}
	// What each stage turns on, from the oracle: the feature and its gate.
	apiGates := map[string]bool{fixtures.NodeDeclaredFeatures: true, restartAll: true}
	schedGates := map[string]bool{fixtures.NodeDeclaredFeatures: true}
	kubeletGates := func(p topology.Pool) map[string]bool {
		g := maps.Clone(p.Kubelet.FeatureGates)
		if g == nil {
			g = map[string]bool{}
		}
		g[fixtures.NodeDeclaredFeatures], g[restartAll] = true, true
		return g
	}

	AfterAll(func(ctx SpecContext) {
		// Back to the topology, in the reverse of the rollout order; the
		// kubelets publish nothing then, so their old sets are cleared.
		for _, p := range append([]topology.Pool{canary}, rest...) {
			setPoolKubelets(ctx, p, p.Kubelet.FeatureGates, true)
		}
		setComponentGates(ctx, "kube-scheduler", suiteTopology.ControlPlane.Scheduler.FeatureGates)
		setComponentGates(ctx, "kube-apiserver", suiteTopology.ControlPlane.APIServer.FeatureGates)
		g := stageProbe(ctx, "restored")
		Expect(g.Verdict).To(Equal("GO"), "restored cluster: %v", g.Reasons)
	}, NodeTimeout(12*time.Minute))

	It("stage 0, NodeDeclaredFeatures off everywhere: GO, and every pool takes control pods", func(ctx SpecContext) {
		g := stageProbe(ctx, "0 off")
		Expect(g.Verdict).To(Equal("GO"), "%v", g.Reasons)
	}, SpecTimeout(3*time.Minute))

	It("the wrong order, the scheduler before the apiserver, is a HOLD on rollout-order naming the control plane", func(ctx SpecContext) {
		setComponentGates(ctx, "kube-scheduler", schedGates)
		g := stageProbe(ctx, "wrong: scheduler first")
		Expect(g.Verdict).To(Equal("HOLD"))
		Expect(conditionsOf(g)).To(ContainElement("rollout-order"))
		Expect(fmt.Sprint(g.Reasons)).To(ContainSubstring("rollout-order [control-plane]"))
		setComponentGates(ctx, "kube-scheduler", suiteTopology.ControlPlane.Scheduler.FeatureGates)
	}, SpecTimeout(6*time.Minute))

	It(fmt.Sprintf("the wrong order, %s kubelets before the apiserver, is a HOLD on rollout-order naming each node, saying whether the apiserver stored the declarations", canary.Name), func(ctx SpecContext) {
		setPoolKubelets(ctx, canary, kubeletGates(canary), false)
		g := stageProbe(ctx, "wrong: kubelets first")
		Expect(g.Verdict).To(Equal("HOLD"))
		for _, d := range declarationsOfPool(ctx, canary) {
			Expect(fmt.Sprint(g.Reasons)).To(ContainSubstring("rollout-order [%s/%s]", canary.Name, d.Node))
			record(report.Observation{Kind: report.KindFinding, Pool: canary.Name, Node: d.Node, Set: d.Declared, OK: true,
				Text: fmt.Sprintf("kubelet NDF on under a gate-off apiserver: status.declaredFeatures stored=%t %v", d.Published, d.Declared)})
		}
		setPoolKubelets(ctx, canary, canary.Kubelet.FeatureGates, true)
	}, SpecTimeout(6*time.Minute))

	It("stage 1, the apiserver: HOLD until the scheduler follows (gate-fingerprint, unexpected-admission), control pods still schedule", func(ctx SpecContext) {
		setComponentGates(ctx, "kube-apiserver", apiGates)
		g := stageProbe(ctx, "1 apiserver")
		Expect(conditionsOf(g)).To(Equal([]string{"gate-fingerprint", "unexpected-admission"}), "%v", g.Reasons)
	}, SpecTimeout(6*time.Minute))

	It("stage 2, the scheduler: GO, feature pods refused on every pool because no kubelet declares yet", func(ctx SpecContext) {
		setComponentGates(ctx, "kube-scheduler", schedGates)
		g := stageProbe(ctx, "2 scheduler")
		Expect(g.Verdict).To(Equal("GO"), "%v", g.Reasons)
		for _, p := range g.Pools {
			if p.Pool != topology.ControlPlanePool {
				Expect(p.Refusals).To(BeNumerically(">", 0), "pool %s took a feature pod no node declares", p.Pool)
			}
		}
	}, SpecTimeout(6*time.Minute))

	It(fmt.Sprintf("stage 3, the canary pool %s: GO, its nodes declare the oracle's set and take feature pods", canary.Name), func(ctx SpecContext) {
		setPoolKubelets(ctx, canary, kubeletGates(canary), false)
		g := stageProbe(ctx, "3 canary")
		Expect(g.Verdict).To(Equal("GO"), "%v", g.Reasons)
	}, SpecTimeout(6*time.Minute))

	It("stage 4, the rest of the fleet: GO; pools whose kubelets cannot have the gate keep refusing feature pods", func(ctx SpecContext) {
		for _, p := range rest {
			setPoolKubelets(ctx, p, kubeletGates(p), false)
		}
		g := stageProbe(ctx, "4 fleet")
		Expect(g.Verdict).To(Equal("GO"), "%v", g.Reasons)
		for _, p := range g.Pools {
			for _, l := range legacy {
				if p.Pool == l.Name {
					Expect(p.Refusals).To(BeNumerically(">", 0), "legacy pool %s took a feature pod", p.Pool)
				}
			}
		}
	}, SpecTimeout(8*time.Minute))

	It(fmt.Sprintf("rolling the control plane back (scheduler, then apiserver) keeps a running dependent pod on %s running, records what happens to a Pending one, and control pods schedule", canary.Name), func(ctx SpecContext) {
		ns := specNamespace(ctx, "cprollback")
		running := runningPod(ctx, ns, "dependent", canary, schedulingProbe(restartAll).Apply)
		var pendingPool topology.Pool
		if len(legacy) > 0 {
			pendingPool = legacy[0]
		}
		var pending probes.Placement
		if pendingPool.Name != "" {
			var err error
			pending, err = probes.Place(ctx, env.Clientset, ns, featurePod("pending", pendingPool))
			Expect(err).NotTo(HaveOccurred())
			Expect(pending.Node).To(BeEmpty(), "precondition: refused on %s", pendingPool.Name)
		}
		setComponentGates(ctx, "kube-scheduler", suiteTopology.ControlPlane.Scheduler.FeatureGates)
		setComponentGates(ctx, "kube-apiserver", suiteTopology.ControlPlane.APIServer.FeatureGates)
		still, err := probes.WaitRunning(ctx, env.Clientset, ns, running.Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(still.Spec.NodeName).To(Equal(running.Spec.NodeName))
		Expect(still.Status.ContainerStatuses[0].RestartCount).To(BeZero(), "the dependent pod was restarted by the rollback")
		if pendingPool.Name != "" {
			fate := "still Pending after the rollback"
			// Not a claim, a record: the scheduler may bind it or leave it.
			_ = poll.Until(ctx, "wait-scheduling", "the Pending dependent's fate", func(ctx context.Context) (bool, string, error) {
				p, err := env.Clientset.CoreV1().Pods(ns).Get(ctx, "pending", metav1.GetOptions{})
				if err != nil {
					return false, err.Error(), nil
				}
				if p.Spec.NodeName != "" {
					fate = "bound to " + p.Spec.NodeName + " once the scheduler stopped filtering"
					return true, "", nil
				}
				return false, fate, nil
			})
			record(report.Observation{Kind: report.KindFinding, Pool: pendingPool.Name, Feature: restartAll, OK: true,
				Text: "control-plane rollback: a Pending dependent pod was " + fate})
		}
		control, err := probes.Place(ctx, env.Clientset, ns, fixtures.BasePod("control-after", topology.PoolLabel, canary.Name))
		Expect(err).NotTo(HaveOccurred())
		Expect(control.Node).NotTo(BeEmpty(), "control pod after rollback: %s", control.Message)
	}, SpecTimeout(8*time.Minute))
})
