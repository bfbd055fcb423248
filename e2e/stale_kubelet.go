//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// StaleKubeletSpecInput is the input of StaleKubeletSpec.
type StaleKubeletSpecInput struct{ framework.SpecInput }

// StaleKubeletSpec stops declaring kubelets: their declarations stay, the
// probe calls them stale, feature pods wait and control pods go elsewhere;
// restarted, each node is fresh and takes its waiting pod. It runs as a
// wave: every subject's kubelet is stopped at once and the node lifecycle
// controller's grace period is waited out once; then each pool's outcome
// is its own spec, which restarts that pool's kubelet.
func StaleKubeletSpec(_ context.Context, inputGetter func() StaleKubeletSpecInput) {
	t := inputGetter().Topology
	pairs, why := dropSubjects(t)
	alert := claims.OfPool(claims.Matrix(t), claims.StaleAlert, claims.SignalsAlerts)[0]
	if why != "" {
		BeforeEach(func() { inputGetter().Check("StaleKubeletSpec") })
		notApplicable("a stopped kubelet keeps its declarations and the probe calls them stale", why)
		staleAlert(inputGetter, nil, alert)
	}
	// The probe's HOLD on the oldest pool's stopped kubelet joins the first
	// wave that does not send pods there, or makes a wave of its own.
	oldest := framework.OldestPool(t.Workers)
	waves := stopWaves(t, pairs)
	hold := slices.IndexFunc(waves, func(w []dropPair) bool {
		return !slices.ContainsFunc(w, func(p dropPair) bool { return p.fallback.Name == oldest.Name })
	})
	if hold < 0 {
		waves, hold = append(waves, nil), len(waves)
	}
	for i, wave := range waves {
		w := &stoppedWave{pairs: wave}
		if i == hold && !slices.ContainsFunc(wave, func(p dropPair) bool { return p.subject.Name == oldest.Name }) {
			w.also = []topology.Pool{oldest}
		}
		Context(fmt.Sprintf("wave %d: %s stopped at once", i+1, w.poolNames()), Ordered, ContinueOnFailure, func() {
			AfterAll(func(ctx SpecContext) { w.restore(ctx) }, NodeTimeout(6*time.Minute))
			if i == 0 && why == "" {
				// First, so it reads the alert before the wave stops anything.
				staleAlert(inputGetter, w, alert)
			}
			for _, pair := range wave {
				staleKubelet(t, inputGetter, w, pair)
			}
			if i == hold {
				probeHoldsStopped(inputGetter, w, oldest)
			}
		})
	}
}

// staleAlert is the stale-alert cell, observed in the first wave: the
// shipped alert is silent before the wave stops its kubelets and fires,
// for every stopped pool, while they are down (wait-alert-fires).
func staleAlert(inputGetter func() StaleKubeletSpecInput, w *stoppedWave, cell claims.Cell) {
	cellIt(cell, fmt.Sprintf("the shipped alert %s was silent before the wave and fired for each of its pools while their kubelets were stopped", claims.AlertStaleDeclarations), func(ctx SpecContext) {
		in := inputGetter()
		in.Check("StaleKubeletSpec")
		e := in.Env
		Expect(w.tried).To(BeFalse(), "the alert's cell must read the alert before the wave stops its kubelets")
		prom, err := e.PrometheusUp(ctx)
		Expect(err).NotTo(HaveOccurred(), "the suite's Prometheus, which loads the shipped rules")
		before, err := prom.FiringFor(ctx, claims.AlertStaleDeclarations)
		Expect(err).NotTo(HaveOccurred())
		w.ensureStopped(ctx, e)
		pools := slices.Sorted(maps.Keys(w.nodes))
		seen, detail := claims.Fired, ""
		if len(before) > 0 {
			seen = fmt.Sprintf("already firing before the wave, for %v", before)
		} else {
			fired, err := prom.WaitFiring(ctx, claims.AlertStaleDeclarations, pools)
			detail = fmt.Sprintf("firing for %v; the wave stopped %v", fired, pools)
			if err != nil {
				seen = fmt.Sprintf("silent before the wave; %v", err)
			}
		}
		framework.RecordCell(cell, "", seen, detail)
		Expect(seen).To(Equal(cell.Expect), "%s (%s)", claims.AlertStaleDeclarations, detail)
	}, timeoutIfApplies(cell, 8*time.Minute)...)
}

// probeHoldsStopped is the probe's own claim in a wave: the CLI says HOLD
// (exit 1) naming the node whose kubelet the wave stopped.
func probeHoldsStopped(inputGetter func() StaleKubeletSpecInput, w *stoppedWave, pool topology.Pool) {
	It(fmt.Sprintf("the ndfq probe CLI says HOLD (exit 1) naming the node after the kubelet of %s is stopped", framework.PoolDesc(pool)), func(ctx SpecContext) {
		in := inputGetter()
		in.Check("StaleKubeletSpec")
		w.ensureStopped(ctx, in.Env)
		n := w.nodes[pool.Name]
		Expect(w.code).To(Equal(1), "probe verdict %s: %v", w.verdict.Outcome, w.verdict.Reasons)
		Expect(w.verdict.Holds(verdict.StaleDeclarations, pool.Name, n.name)).To(BeTrue(),
			"the probe should hold on %s [%s/%s]; it said %s %v", verdict.StaleDeclarations, pool.Name, n.name, w.verdict.Outcome, w.verdict.Reasons)
	}, SpecTimeout(8*time.Minute))
}

// stoppedWave is what a wave saw while its kubelets were down. The first
// spec stops them all; a failure there fails every spec of the wave with
// it (a BeforeAll's would leave the others skipped, unreported).
type stoppedWave struct {
	pairs []dropPair
	// also are pools stopped for the probe's claim alone.
	also []topology.Pool
	waveStart
	env     *framework.Env
	nodes   map[string]stoppedNode // by subject pool
	code    int                    // the one probe run's exit code
	verdict verdict.Verdict
}

type stoppedNode struct {
	name   string
	node   nodes.Node
	before []string
}

// ensureStopped stops the wave once, and says how that went to every spec.
func (w *stoppedWave) ensureStopped(ctx SpecContext, e *framework.Env) {
	GinkgoHelper()
	w.once(func() { w.stop(ctx, e) }, "stopping the wave's kubelets (%s)", w.poolNames())
}

// stop stops every subject's kubelet, waits until each node is NotReady
// (one grace period for all), and probes them all once.
func (w *stoppedWave) stop(ctx SpecContext, e *framework.Env) {
	w.env, w.nodes = e, map[string]stoppedNode{}
	var pools []string
	for _, pair := range w.pairs {
		name, node := e.PoolNode(ctx, pair.subject)
		before := framework.SortedCopy(e.DeclaredOf(ctx, name))
		Expect(before).To(ContainElement(restartAll), "precondition on %s", name)
		w.nodes[pair.subject.Name] = stoppedNode{name, node, before}
		pools = append(pools, pair.subject.Name)
	}
	for _, pool := range w.also {
		name, node := e.PoolNode(ctx, pool)
		w.nodes[pool.Name] = stoppedNode{name, node, framework.SortedCopy(e.DeclaredOf(ctx, name))}
		pools = append(pools, pool.Name)
	}
	for _, pool := range pools {
		By("stopping the kubelet on " + w.nodes[pool].name)
		Expect(surgery.StopKubelet(w.nodes[pool].node)).To(Succeed())
	}
	for _, pool := range pools {
		e.WaitNodeReady(ctx, w.nodes[pool].name, false)
	}
	freshness := framework.StaleFreshness(ctx, e.Clientset)
	By(fmt.Sprintf("one probe of pools %v with --freshness %s", pools, freshness))
	w.code, w.verdict = e.ProbeVerdictOn(ctx, pools, "--freshness", freshness)
}

// restore starts every kubelet of the wave (a spec restarts its own; this
// is for those that failed first) and waits until each node is Ready.
func (w *stoppedWave) restore(ctx SpecContext) {
	if w.env == nil {
		return
	}
	for _, n := range w.nodes {
		Expect(surgery.StartKubelet(n.node)).To(Succeed())
	}
	for _, n := range w.nodes {
		w.env.WaitNodeReady(ctx, n.name, true)
	}
}

// staleKubelet is one pool's outcome of the wave: fallback takes the
// control pod.
func staleKubelet(t *topology.Topology, inputGetter func() StaleKubeletSpecInput, w *stoppedWave, pair dropPair) {
	subject := pair.subject
	It(fmt.Sprintf("a stopped kubelet on %s keeps its declarations; the probe calls them stale; feature pods wait (the NotReady taint refuses them) and control pods go elsewhere; restarted, the node is fresh and takes the waiting pod", framework.PoolDesc(subject)), func(ctx SpecContext) {
		in := inputGetter()
		in.Check("StaleKubeletSpec")
		e := in.Env
		w.ensureStopped(ctx, e)
		n := w.nodes[subject.Name]
		ns := e.Namespace(ctx, "stale")
		probe := framework.FeaturePod(t, restartAll)
		Expect(framework.SortedCopy(e.DeclaredOf(ctx, n.name))).To(Equal(n.before), "a NotReady node's declarations are left as they were")

		By("the probe holds on stale declarations")
		Expect(w.code).To(Equal(1), "probe verdict %s: %v", w.verdict.Outcome, w.verdict.Reasons)
		Expect(w.verdict.Holds(verdict.StaleDeclarations, subject.Name, n.name)).To(BeTrue(),
			"the probe should hold on %s [%s/%s]; it said %s %v", verdict.StaleDeclarations, subject.Name, n.name, w.verdict.Outcome, w.verdict.Reasons)

		By("a feature pod waits, refused for the NotReady taint (its stale declarations still say yes); a control pod with no affinity goes elsewhere")
		// Pinned to the node by name, so the refusal counts that node's reason
		// alone: the wave's other NotReady nodes carry the same taint, and a
		// pool pod's message would name it even where this node refused the
		// pod for another reason.
		waiting := e.Place(ctx, ns, framework.NodePod("waits-"+subject.Name, n.name, probe.Apply))
		Expect(waiting.Node).To(BeEmpty(), "a feature pod was bound to the NotReady node %s", n.name)
		// The scheduler names the TaintToleration plugin's reason, not the
		// taint's key ("N node(s) had untolerated taint(s)"); the node's own
		// taints say which.
		Expect(waiting.Message).To(ContainSubstring("1 node(s) "+fixtures.TaintRefusal), "why the feature pod waits on %s: the node's NotReady taint", n.name)
		Expect(waiting.Message).NotTo(ContainSubstring(fixtures.SchedulerRefusal(framework.CPMinor(t), restartAll)), "not its declarations, which still say yes")
		Expect(e.Node(ctx, n.name).Spec.Taints).To(ContainElement(HaveField("Key", Or(Equal(corev1.TaintNodeUnreachable), Equal(corev1.TaintNodeNotReady)))),
			"node %s, NotReady, carries the node lifecycle controller's taint", n.name)
		elsewhere := e.Place(ctx, ns, framework.AnyPod("elsewhere-"+subject.Name))
		Expect(elsewhere.Node).NotTo(BeEmpty(), "control pod while %s is down: %s", n.name, elsewhere.Message)
		Expect(elsewhere.Node).NotTo(Equal(n.name), "a control pod bound to the NotReady node")

		By("restarting the kubelet: the waiting pod lands there")
		Expect(surgery.StartKubelet(n.node)).To(Succeed())
		e.WaitNodeReady(ctx, n.name, true)
		running := e.WaitRunning(ctx, ns, "waits-"+subject.Name)
		Expect(running.Spec.NodeName).To(Equal(n.name), "the waiting feature pod lands on the node once it is back")
		e.WaitKubelet(ctx, n.name, "", nil)
		// Judged against the plan, not the gates the restarted kubelet reports itself.
		e.WaitDeclared(ctx, n.name, subject.Intent().MustDeclare())
		framework.Record(report.Observation{Kind: report.KindMeasure, Pool: subject.Name, Node: n.name, OK: true,
			Text: fmt.Sprintf("stopped kubelet (a wave of %d): declarations unchanged while NotReady; probe HOLD stale-declarations; waiting feature pod bound after restart", len(w.nodes))})
	}, SpecTimeout(8*time.Minute))
}

// stopWaves groups pairs so that no pool of a wave is another pair's
// fallback: each pair's fallback is a declaring pool outside the wave
// (the control plane's where it declares). Pairs that find none there
// keep the fallback dropSubjects gave them, in a wave of their own.
func stopWaves(t *topology.Topology, pairs []dropPair) [][]dropPair {
	stopped := map[string]bool{}
	for _, p := range pairs {
		stopped[p.subject.Name] = true
	}
	fallback, ok := framework.PoolWhere(t.Pools(), func(p topology.Pool) bool {
		return p.Intent().Declares(restartAll) && !stopped[p.Name]
	})
	if !ok {
		var waves [][]dropPair
		for _, p := range pairs {
			waves = append(waves, []dropPair{p})
		}
		return waves
	}
	wave := make([]dropPair, len(pairs))
	for i, p := range pairs {
		wave[i] = dropPair{p.subject, fallback}
	}
	return [][]dropPair{wave}
}

// poolNames are the pools the wave stops.
func (w *stoppedWave) poolNames() string { return joinPools(append(subjectsOf(w.pairs), w.also...)) }

// dropPair is a worker pool whose kubelets declare the placement feature
// and may turn it off, and another pool (the control plane's included)
// that keeps it for pods to move to.
type dropPair struct{ subject, fallback topology.Pool }

// dropSubjects is one pair per subject of claims.DropSubjects (every
// publishing kind of kubelet gets the scenario), each with a pool that
// keeps the feature. why says what the topology lacks where it has none,
// or that its control plane refuses nothing.
func dropSubjects(t *topology.Topology) (pairs []dropPair, why string) {
	subjects, why := claims.DropSubjects(t)
	for _, subject := range subjects {
		fallback, _ := framework.PoolWhere(t.Pools(), func(p topology.Pool) bool {
			return p.Intent().Declares(restartAll) && p.Name != subject.Name
		})
		pairs = append(pairs, dropPair{subject, fallback})
	}
	return pairs, why
}
