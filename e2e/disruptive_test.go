//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/poll"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// The disruptive suite changes kubelets under a running cluster: stops
// them, drops gates, swaps binaries. Every spec puts the node back as the
// topology says and checks it did, so the suites after it see the cluster
// they expect.
var disruptive = Label("Disruptive")

const restartAll = "RestartAllContainersOnContainerExits"

// poolNode is the first node of a pool and its kind container.
func poolNode(ctx SpecContext, pool topology.Pool) (string, nodes.Node) {
	name := declarationsOfPool(ctx, pool)[0].Node
	node, err := env.Cluster.KindNode(name)
	Expect(err).NotTo(HaveOccurred())
	return name, node
}

func getNode(ctx context.Context, name string) (*corev1.Node, error) {
	return env.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// waitKubelet waits until the node's kubelet runs version (if given), is
// Ready, and reports every gate in gates as set: a restart is done when
// the node says so, never after a sleep.
func waitKubelet(ctx SpecContext, name, version string, gates map[string]bool) {
	Expect(poll.Until(ctx, "wait-kubelet-sync", fmt.Sprintf("kubelet on %s to run %s with %s", name, orAny(version), surgery.FormatGatesOrNone(gates)), func(ctx context.Context) (bool, string, error) {
		n, err := getNode(ctx, name)
		if err != nil {
			return false, err.Error(), nil
		}
		if version != "" && n.Status.NodeInfo.KubeletVersion != version {
			return false, "kubelet version " + n.Status.NodeInfo.KubeletVersion, nil
		}
		if !probes.NodeReady(*n) {
			return false, "not Ready", nil
		}
		reported, err := probes.KubeletGates(ctx, env.Clientset, name)
		if err != nil {
			return false, err.Error(), nil
		}
		for g, want := range gates {
			if reported.Known(g) && reported.Enabled(g) != want {
				return false, fmt.Sprintf("%s=%t", g, reported.Enabled(g)), nil
			}
		}
		return true, "", nil
	})).To(Succeed())
}

func orAny(v string) string {
	if v == "" {
		return "its version"
	}
	return v
}

// waitDeclared waits until the node's status.declaredFeatures is want.
func waitDeclared(ctx SpecContext, name string, want []string) {
	want = sortedCopy(want)
	Expect(poll.Until(ctx, "wait-kubelet-sync", fmt.Sprintf("%s to declare %s", name, describeSet(want)), func(ctx context.Context) (bool, string, error) {
		n, err := getNode(ctx, name)
		if err != nil {
			return false, err.Error(), nil
		}
		got := sortedCopy(n.Status.DeclaredFeatures)
		return slices.Equal(got, want), "declares " + describeSet(got), nil
	})).To(Succeed())
}

// waitLeaseRenewals waits until the node's lease is renewed n times: the
// kubelet was alive and had its chances to update the node's status.
func waitLeaseRenewals(ctx SpecContext, name string, n int) {
	var last time.Time
	seen := 0
	Expect(poll.Until(ctx, "wait-kubelet-sync", fmt.Sprintf("%d lease renewals of %s", n, name), func(ctx context.Context) (bool, string, error) {
		l, err := env.Clientset.CoordinationV1().Leases("kube-node-lease").Get(ctx, name, metav1.GetOptions{})
		if err != nil || l.Spec.RenewTime == nil {
			return false, fmt.Sprint(err), nil
		}
		if t := l.Spec.RenewTime.Time; !t.Equal(last) {
			if !last.IsZero() {
				seen++
			}
			last = t
		}
		return seen >= n, fmt.Sprintf("%d renewals", seen), nil
	})).To(Succeed())
}

func waitReady(ctx SpecContext, name string, ready bool) {
	Expect(poll.Until(ctx, "wait-nodes", fmt.Sprintf("%s Ready=%t", name, ready), func(ctx context.Context) (bool, string, error) {
		n, err := getNode(ctx, name)
		if err != nil {
			return false, err.Error(), nil
		}
		return probes.NodeReady(*n) == ready, fmt.Sprintf("Ready=%t", probes.NodeReady(*n)), nil
	})).To(Succeed())
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// featurePod is a probe pod that needs RestartAllContainers, steered to pool.
func featurePod(name string, pool topology.Pool) *corev1.Pod {
	probe := schedulingProbe(restartAll)
	pod := fixtures.BasePod(name, topology.PoolLabel, pool.Name)
	probe.Apply(pod)
	return pod
}

func schedulingProbe(feature string) fixtures.SchedulingProbe {
	for _, p := range fixtures.SchedulingProbes(cpMinor) {
		if p.Feature == feature {
			return p
		}
	}
	Fail("no scheduling probe for " + feature + " on a " + cpMinor + " control plane")
	return fixtures.SchedulingProbe{}
}

// waitPodFailed waits until the kubelet fails the pod and returns its reason.
func waitPodFailed(ctx SpecContext, ns, name string) *corev1.Pod {
	var pod *corev1.Pod
	Expect(poll.Until(ctx, "wait-pod-running", "pod "+name+" to be failed by its kubelet", func(ctx context.Context) (bool, string, error) {
		p, err := env.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		pod = p
		return p.Status.Phase == corev1.PodFailed, string(p.Status.Phase), nil
	})).To(Succeed())
	return pod
}

// restoreKubelet puts a node's kubelet back as the topology has it and
// checks the node declares the intended set again.
func restoreKubelet(ctx SpecContext, pool topology.Pool, name string, node nodes.Node, swapped bool) {
	if swapped {
		_, err := surgery.WriteKubeletGates(node, pool.Kubelet.FeatureGates)
		Expect(err).NotTo(HaveOccurred())
		Expect(surgery.SwapKubelet(node, "")).To(Succeed())
	} else {
		_, err := surgery.SetKubeletGates(node, pool.Kubelet.FeatureGates)
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(surgery.Cordon(ctx, env.Clientset, name, false)).To(Succeed())
	waitKubelet(ctx, name, pool.PoolVersion(), pool.Kubelet.FeatureGates)
	if !kubeletPublishes(pool) {
		// A kubelet that publishes nothing never clears what another wrote.
		Expect(patchDeclared(ctx, name, nil)).To(Succeed())
	}
	waitDeclared(ctx, name, intendedSet(pool))
}

// pick is the first worker pool matching pred; the control plane's kubelet
// is never operated on.
func pick(pred func(topology.Pool) bool) (topology.Pool, bool) {
	for _, p := range suiteTopology.Workers {
		if pred(p) {
			return p, true
		}
	}
	return topology.Pool{}, false
}

func gateLocked(minor, gate string) bool {
	s, known := fixtures.Gate(minor, gate)
	return !known || s.Locked
}

func declaresRestartAll(p topology.Pool) bool { return slices.Contains(intendedSet(p), restartAll) }

// olderVersion is a version of the topology one minor older than pool's:
// every node image carries the kubelets of the topology's versions.
func olderVersion(p topology.Pool) (string, bool) {
	want := fixtures.PreviousMinor(fixtures.MinorOf(p.Version))
	for _, v := range suiteTopology.Versions() {
		if fixtures.MinorOf(v) == want {
			return v, true
		}
	}
	return "", false
}

// Not Ordered: each spec restores what it changed, so one failure does not
// hide the others.
var _ = Describe("Rollout and rollback on a running fleet", ndf, disruptive, Serial, func() {
	if !schedulerIntends() || !apiServerIntends(restartAll) {
		return // without the plugin and the field nothing is refused; the rollout suite starts there
	}
	subject, okSubject := pick(func(p topology.Pool) bool {
		return declaresRestartAll(p) && !gateLocked(fixtures.MinorOf(p.Version), restartAll)
	})
	// Pods may move to any pool that keeps the feature, the control plane's included.
	fallback, okFallback := firstPool(func(p topology.Pool) bool { return declaresRestartAll(p) && p.Name != subject.Name })

	if okSubject && okFallback {
		It(fmt.Sprintf("a stopped kubelet on %s keeps its declarations; the probe calls them stale; feature pods wait and control pods go elsewhere; restarted, the node is fresh and takes the waiting pod", poolDesc(subject)), func(ctx SpecContext) {
			name, node := poolNode(ctx, subject)
			before := sortedCopy(declaredOf(ctx, name))
			Expect(before).To(ContainElement(restartAll), "precondition")
			Expect(surgery.StopKubelet(node)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) {
				Expect(surgery.StartKubelet(node)).To(Succeed())
				waitReady(ctx, name, true)
			}, NodeTimeout(6*time.Minute))
			waitReady(ctx, name, false)
			Expect(sortedCopy(declaredOf(ctx, name))).To(Equal(before), "a NotReady node's declarations are left as they were")

			code, out := ndfqProbe(ctx, "--freshness", "30s")
			Expect(code).To(Equal(1), "probe verdict:\n%s", out)
			Expect(out).To(ContainSubstring("HOLD: stale-declarations [%s/%s]", subject.Name, name))

			ns := specNamespace(ctx, "stale")
			waiting, err := probes.Place(ctx, env.Clientset, ns, featurePod("waits", subject))
			Expect(err).NotTo(HaveOccurred())
			Expect(waiting.Node).To(BeEmpty(), "a feature pod was bound to the NotReady node %s", name)
			elsewhere, err := probes.Place(ctx, env.Clientset, ns, fixtures.BasePod("elsewhere", topology.PoolLabel, fallback.Name))
			Expect(err).NotTo(HaveOccurred())
			Expect(elsewhere.Node).NotTo(BeEmpty(), "control pod on %s while %s is down: %s", fallback.Name, name, elsewhere.Message)

			Expect(surgery.StartKubelet(node)).To(Succeed())
			waitReady(ctx, name, true)
			running, err := probes.WaitRunning(ctx, env.Clientset, ns, "waits")
			Expect(err).NotTo(HaveOccurred())
			Expect(running.Spec.NodeName).To(Equal(name), "the waiting feature pod lands on the node once it is back")
			waitKubelet(ctx, name, "", nil)
			decls := declarationsOfPool(ctx, subject)
			Expect(decls[0].Matches()).To(BeTrue(), "after restart: declares %v, oracle %v", decls[0].Declared, decls[0].Expected)
			record(report.Observation{Kind: report.KindMeasure, Pool: subject.Name, Node: name, OK: true,
				Text: "stopped kubelet: declarations unchanged while NotReady; probe HOLD stale-declarations; waiting feature pod bound after restart"})
		}, SpecTimeout(8*time.Minute))

		It(fmt.Sprintf("restarting the kubelet of %s without %s fails the running pods that need it (PodFeatureUnsupported): the trap the safe order avoids", poolDesc(subject), restartAll), func(ctx SpecContext) {
			name, node := poolNode(ctx, subject)
			ns := specNamespace(ctx, "trap")
			pod := runningPod(ctx, ns, "dependent", subject, schedulingProbe(restartAll).Apply)
			Expect(pod.Spec.NodeName).To(Equal(name))
			off := fixtures.GatesWithout(fixtures.MinorOf(subject.Version), subject.Kubelet.FeatureGates, restartAll)
			DeferCleanup(restoreKubelet, subject, name, node, false, NodeTimeout(6*time.Minute))
			_, err := surgery.SetKubeletGates(node, off)
			Expect(err).NotTo(HaveOccurred())
			waitKubelet(ctx, name, "", off)
			failed := waitPodFailed(ctx, ns, pod.Name)
			Expect(failed.Status.Reason).To(Equal(fixtures.KubeletRejectionReason), "status %+v", failed.Status)
			Expect(failed.Status.Message).To(ContainSubstring(fixtures.KubeletRejectionMessage(restartAll)))
			minor := fixtures.MinorOf(subject.Version)
			waitDeclared(ctx, name, fixtures.Expected(minor, fixtures.EffectiveGates(minor, off), fixtures.Runtime{}))
			record(report.Observation{Kind: report.KindFinding, Pool: subject.Name, Node: name, Feature: restartAll, OK: true,
				Text: "kubelet restarted with the feature's gate off failed its running dependent pod: " + failed.Status.Reason})
		}, SpecTimeout(8*time.Minute))

		It(fmt.Sprintf("the safe order on %s moves dependent pods to %s before the gate goes: none is failed and the node stops declaring %s", poolDesc(subject), fallback.Name, restartAll), func(ctx SpecContext) {
			name, node := poolNode(ctx, subject)
			ns := specNamespace(ctx, "safe")
			pod := runningPod(ctx, ns, "dependent", subject, schedulingProbe(restartAll).Apply)
			off := fixtures.GatesWithout(fixtures.MinorOf(subject.Version), subject.Kubelet.FeatureGates, restartAll)
			DeferCleanup(restoreKubelet, subject, name, node, false, NodeTimeout(6*time.Minute))
			_, err := surgery.DropKubeletFeatures(ctx, dropInput(subject, name, node, fixtures.MinorOf(subject.Version), off))
			Expect(err).NotTo(HaveOccurred())
			waitKubelet(ctx, name, "", off)
			minor := fixtures.MinorOf(subject.Version)
			waitDeclared(ctx, name, fixtures.Expected(minor, fixtures.EffectiveGates(minor, off), fixtures.Runtime{}))

			if orig, err := env.Clientset.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err == nil {
				Expect(orig.DeletionTimestamp).NotTo(BeNil(), "the original is deleted once its replacement runs")
				Expect(orig.Status.Phase).NotTo(Equal(corev1.PodFailed), "the original was failed by its kubelet: %s", orig.Status.Reason)
			}
			moved, err := probes.WaitRunning(ctx, env.Clientset, ns, pod.Name+"-moved")
			Expect(err).NotTo(HaveOccurred())
			Expect(nodePool(ctx, moved.Spec.NodeName)).To(Equal(fallback.Name))
			// Uncordoned, the node no longer takes what it cannot run.
			Expect(surgery.Cordon(ctx, env.Clientset, name, false)).To(Succeed())
			res, err := probes.Place(ctx, env.Clientset, ns, featurePod("after", subject))
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Node).To(BeEmpty(), "feature pod bound to %s after it dropped the feature", name)
			Expect(res.Message).To(ContainSubstring(fixtures.SchedulerRefusal(cpMinor, restartAll)))
		}, SpecTimeout(8*time.Minute))

		It(fmt.Sprintf("the safe order refuses to close gates on %s when no other node keeps %s, and changes nothing", poolDesc(subject), restartAll), func(ctx SpecContext) {
			name, node := poolNode(ctx, subject)
			ns := specNamespace(ctx, "nocap")
			runningPod(ctx, ns, "dependent", subject, schedulingProbe(restartAll).Apply)
			var cordoned []string
			DeferCleanup(func(ctx SpecContext) {
				for _, n := range cordoned {
					Expect(surgery.Cordon(ctx, env.Clientset, n, false)).To(Succeed())
				}
			})
			all, err := probes.Declarations(ctx, probes.DeclarationsInput{Clientset: env.Clientset, PoolLabel: topology.PoolLabel})
			Expect(err).NotTo(HaveOccurred())
			for _, d := range all {
				if d.Node != name && slices.Contains(d.Declared, restartAll) {
					Expect(surgery.Cordon(ctx, env.Clientset, d.Node, true)).To(Succeed())
					cordoned = append(cordoned, d.Node)
				}
			}
			before, err := surgery.KubeletGates(node)
			Expect(err).NotTo(HaveOccurred())
			_, err = surgery.DropKubeletFeatures(ctx, dropInput(subject, name, node, fixtures.MinorOf(subject.Version), map[string]bool{restartAll: false}))
			var noCap *surgery.NoCapacityError
			Expect(errors.As(err, &noCap)).To(BeTrue(), "got %v", err)
			Expect(err.Error()).To(ContainSubstring("not closing gates on %s", name))
			after, err := surgery.KubeletGates(node)
			Expect(err).NotTo(HaveOccurred())
			Expect(after).To(Equal(before), "the kubelet's gates were changed anyway")
			n, err := getNode(ctx, name)
			Expect(err).NotTo(HaveOccurred())
			Expect(n.Spec.Unschedulable).To(BeFalse(), "the node was cordoned anyway")
		}, SpecTimeout(4*time.Minute))
	}

	// Gate rollback: NDF off on every pool whose kubelets publish and may turn it off.
	for _, pool := range suiteTopology.Workers {
		pool := pool
		minor := fixtures.MinorOf(pool.Version)
		if !kubeletPublishes(pool) || gateLocked(minor, fixtures.NodeDeclaredFeatures) {
			continue
		}
		rollback := fixtures.GatesWithout(minor, pool.Kubelet.FeatureGates, fixtures.NodeDeclaredFeatures)
		It(fmt.Sprintf("rolling back NodeDeclaredFeatures on %s (%s) leaves its declarations in place; the probe holds on declared-but-not-enabled; clearing status.declaredFeatures makes the node honest and feature pods are refused there", poolDesc(pool), surgery.FormatGatesOrNone(rollback)), func(ctx SpecContext) {
			name, node := poolNode(ctx, pool)
			before := sortedCopy(declaredOf(ctx, name))
			Expect(before).NotTo(BeEmpty(), "precondition")
			ns := specNamespace(ctx, "rollback")
			DeferCleanup(restoreKubelet, pool, name, node, false, NodeTimeout(6*time.Minute))
			_, err := surgery.DropKubeletFeatures(ctx, dropInput(pool, name, node, minor, rollback))
			Expect(err).NotTo(HaveOccurred())
			Expect(surgery.Cordon(ctx, env.Clientset, name, false)).To(Succeed())
			waitKubelet(ctx, name, "", rollback)
			waitLeaseRenewals(ctx, name, 2)
			stale := sortedCopy(declaredOf(ctx, name))
			Expect(stale).To(Equal(before), "NDF-off kubelet: declarations of the old kubelet")
			recordStale(pool, name, "gate rollback "+surgery.FormatGatesOrNone(rollback), stale)

			code, out := ndfqProbe(ctx)
			Expect(code).To(Equal(1), "probe verdict:\n%s", out)
			Expect(out).To(ContainSubstring("HOLD: declared-but-not-enabled [%s/%s]", pool.Name, name))

			clearAndVerify(ctx, ns, pool, name, stale)
		}, SpecTimeout(10*time.Minute))
	}

	// Kubelet downgrade in place by one minor, once per minor, on pools whose kubelets publish.
	downgraded := map[string]bool{}
	for _, pool := range suiteTopology.Workers {
		pool := pool
		older, ok := olderVersion(pool)
		if !ok || !kubeletPublishes(pool) || downgraded[fixtures.MinorOf(pool.Version)] {
			continue
		}
		downgraded[fixtures.MinorOf(pool.Version)] = true
		olderMinor := fixtures.MinorOf(older)
		gates := fixtures.GatesFor(olderMinor, pool.Kubelet.FeatureGates)
		It(fmt.Sprintf("downgrading the kubelet of %s in place to %s keeps the newer kubelet's declarations until they are cleared; then the node declares what the %s oracle says", poolDesc(pool), older, olderMinor), func(ctx SpecContext) {
			name, node := poolNode(ctx, pool)
			before := sortedCopy(declaredOf(ctx, name))
			ns := specNamespace(ctx, "downgrade")
			DeferCleanup(restoreKubelet, pool, name, node, true, NodeTimeout(6*time.Minute))
			if unknown := unknownGates(olderMinor, pool.Kubelet.FeatureGates); len(unknown) > 0 {
				// The trap first: the older kubelet refuses gates it does not know.
				_, err := surgery.WriteKubeletGates(node, pool.Kubelet.FeatureGates)
				Expect(err).NotTo(HaveOccurred())
				Expect(surgery.SwapKubelet(node, older)).To(Succeed())
				Expect(poll.Until(ctx, "wait-kubelet-sync", "the "+older+" kubelet to refuse "+strings.Join(unknown, ","), func(context.Context) (bool, string, error) {
					log := surgery.KubeletLog(node, 200)
					return strings.Contains(log, "unrecognized feature gate"), "no refusal in the journal yet", nil
				})).To(Succeed())
				record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: name, OK: true,
					Text: fmt.Sprintf("kubelet %s does not start with %s: unrecognized feature gate; a downgrade must drop them", older, strings.Join(unknown, ","))})
			}
			_, err := surgery.DropKubeletFeatures(ctx, dropInput(pool, name, node, olderMinor, gates))
			Expect(err).NotTo(HaveOccurred())
			Expect(surgery.SwapKubelet(node, older)).To(Succeed())
			Expect(surgery.Cordon(ctx, env.Clientset, name, false)).To(Succeed())
			waitKubelet(ctx, name, older, gates)
			waitLeaseRenewals(ctx, name, 2)
			want := fixtures.Expected(olderMinor, fixtures.EffectiveGates(olderMinor, gates), fixtures.Runtime{})
			got := sortedCopy(declaredOf(ctx, name))
			if want != nil {
				// A publishing older kubelet overwrites the set with its own.
				waitDeclared(ctx, name, want)
				return
			}
			Expect(got).To(Equal(before), "a %s kubelet that publishes nothing leaves the newer kubelet's declarations", older)
			recordStale(pool, name, "downgrade to "+older, got)
			code, out := ndfqProbe(ctx)
			Expect(code).To(Equal(1), "probe verdict:\n%s", out)
			Expect(out).To(ContainSubstring("HOLD: declared-but-not-enabled [%s/%s]", pool.Name, name))
			clearAndVerify(ctx, ns, pool, name, got)
		}, SpecTimeout(10*time.Minute))
	}
})

// clearAndVerify is the operator's fix for stale declarations: clear
// status.declaredFeatures, see it stay cleared while the kubelet runs, and
// see the scheduler refuse feature pods there. Where the stale set holds
// the feature the suite places pods with, it first shows the trap: the
// scheduler trusts the stale set and the silent kubelet runs the pod.
func clearAndVerify(ctx SpecContext, ns string, pool topology.Pool, name string, stale []string) {
	if slices.Contains(stale, restartAll) {
		trusted, err := probes.Place(ctx, env.Clientset, ns, featurePod("trusts-stale", pool))
		Expect(err).NotTo(HaveOccurred())
		Expect(trusted.Node).To(Equal(name), "stale declarations: the scheduler still trusts them (%s)", trusted.Message)
		// Re-admission: the kubelet there does not check what it does not publish, so the pod runs.
		ran, err := probes.WaitRunning(ctx, env.Clientset, ns, trusted.Pod)
		Expect(err).NotTo(HaveOccurred(), "the feature pod bound on stale declarations of %s", name)
		record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: name, Feature: restartAll, OK: true,
			Text: fmt.Sprintf("stale declarations: the scheduler bound a pod that needs %s to %s (kubelet %s) and that kubelet, which publishes nothing, admitted it unchecked: %s",
				restartAll, name, kubeletVersionOf(ctx, name), ran.Status.Phase)})
		Expect(env.Clientset.CoreV1().Pods(ns).Delete(ctx, trusted.Pod, metav1.DeleteOptions{})).To(Succeed())
	}

	Expect(patchDeclared(ctx, name, nil)).To(Succeed())
	waitLeaseRenewals(ctx, name, 2)
	Expect(declaredOf(ctx, name)).To(BeEmpty(), "cleared declarations came back")
	decls := declarationsOfPool(ctx, pool)
	Expect(decls[0].Matches()).To(BeTrue(), "after clearing: declares %v, oracle %v", decls[0].Declared, decls[0].Expected)
	refused, err := probes.Place(ctx, env.Clientset, ns, featurePod("refused", pool))
	Expect(err).NotTo(HaveOccurred())
	Expect(refused.Node).To(BeEmpty(), "feature pod bound to %s after its declarations were cleared", name)
	Expect(refused.Message).To(ContainSubstring(fixtures.SchedulerRefusal(cpMinor, restartAll)))
}

func recordStale(pool topology.Pool, node, cause string, set []string) {
	record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: node, Set: set, Digest: fixtures.Digest(set), OK: true,
		Text: cause + ": declarations stayed after two lease renewals (never cleared by a kubelet that publishes nothing)"})
}

func unknownGates(minor string, gates map[string]bool) []string {
	var out []string
	for _, g := range slices.Sorted(maps.Keys(gates)) {
		if _, known := fixtures.Gate(minor, g); !known {
			out = append(out, g)
		}
	}
	return out
}

func kubeletVersionOf(ctx SpecContext, name string) string {
	n, err := getNode(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	return n.Status.NodeInfo.KubeletVersion
}

func nodePool(ctx SpecContext, name string) string {
	n, err := getNode(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	return n.Labels[topology.PoolLabel]
}

// dropInput is the safe procedure for the suite's probe pods on a node of
// pool whose kubelet is to run a targetMinor kubelet with gates: bare pods
// are recreated as "<name>-moved" on another pool that declares what they need.
func dropInput(pool topology.Pool, name string, node nodes.Node, targetMinor string, gates map[string]bool) surgery.DropInput {
	return surgery.DropInput{
		Clientset: env.Clientset, Node: node, NodeName: name, Gates: gates,
		Losing:              lostFeatures(targetMinor, gates),
		ControlPlaneVersion: suiteTopology.ControlPlaneVersion(),
		Log:                 env.Log,
		Replace: func(ctx context.Context, old *corev1.Pod) (*corev1.Pod, error) {
			needs, err := probes.PodNeeds(old, suiteTopology.ControlPlaneVersion())
			if err != nil {
				return nil, err
			}
			target, ok := firstPool(func(p topology.Pool) bool {
				for _, f := range needs {
					if !slices.Contains(intendedSet(p), f) {
						return false
					}
				}
				return p.Name != pool.Name
			})
			if !ok {
				return nil, fmt.Errorf("no other pool declares %v", needs)
			}
			repl := fixtures.BasePod(old.Name+"-moved", topology.PoolLabel, target.Name)
			repl.Spec.Containers = withoutServiceAccountMounts(old.Spec.Containers)
			return env.Clientset.CoreV1().Pods(old.Namespace).Create(ctx, repl, metav1.CreateOptions{})
		},
	}
}

// withoutServiceAccountMounts copies containers without the token volume
// the apiserver injected into the original; the replacement gets its own.
func withoutServiceAccountMounts(cs []corev1.Container) []corev1.Container {
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		c = *c.DeepCopy()
		var mounts []corev1.VolumeMount
		for _, m := range c.VolumeMounts {
			if !strings.HasPrefix(m.Name, "kube-api-access-") {
				mounts = append(mounts, m)
			}
		}
		c.VolumeMounts = mounts
		out[i] = c
	}
	return out
}

// lostFeatures is every registry feature a targetMinor kubelet with gates
// will not declare: pods that need one must leave first.
func lostFeatures(targetMinor string, gates map[string]bool) []string {
	after := fixtures.Expected(targetMinor, fixtures.EffectiveGates(targetMinor, gates), fixtures.Runtime{})
	var out []string
	for _, f := range fixtures.Registry {
		if !slices.Contains(after, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}
