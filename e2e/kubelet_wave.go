//go:build e2e

package e2e

import (
	"context"
	"fmt"
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
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
	"github.com/ndfq/ndfq/verdict"
)

// kubeletChange is one pool's kubelet in a wave: restarted by the safe
// order as after, with the binary of older where it is a downgrade.
type kubeletChange struct {
	pool  topology.Pool
	after fixtures.Kubelet
	older string // the minor's kubelet swapped in; "" keeps the binary
	// trap: gates the older kubelet does not know; it is first started
	// with them and must refuse to run.
	trap  []string
	cause string
}

// publishes is true when the kubelet after the change publishes a set.
func (c kubeletChange) publishes() bool { return c.after.MustDeclare() != nil }

// kubeletWave changes every pool's kubelet at once, waits for them
// together, and observes what each spec then asserts for its own pool:
// the declarations left (stale, or the older kubelet's set), one probe
// over the stale pools, and the operator's fix (status cleared). The
// first spec makes the change; a failure there fails every spec of the
// wave with it. AfterAll restores every kubelet at once.
type kubeletWave struct {
	changes []kubeletChange
	waveStart
	env     *framework.Env
	seen    map[string]*changeSeen // by pool
	code    int                    // the one probe run's exit code
	verdict verdict.Verdict
}

// changeSeen is one pool's part of the wave.
type changeSeen struct {
	name    string
	node    nodes.Node
	before  []string // declared before the change
	trapped bool     // the older kubelet refused the unknown gates
	after   []string // declared two lease renewals after the change
	// The operator's fix, where the set went stale: a pod needing the
	// placement feature placed while the stale set claims it, then the
	// set after clearing and two more renewals, checked by the probe.
	trusted      probes.Placement
	trustedPhase corev1.PodPhase
	cleared      []string
	clearedOK    bool
	clearedWhy   string
}

// kubeletWaveSpecs makes the wave's Context: one spec per change, each
// asserting its pool's part; text names each spec.
func kubeletWaveSpecs(name string, changes []kubeletChange, inputGetter func() framework.SpecInput, text func(kubeletChange) string) {
	Context(fmt.Sprintf("%s: %s at once", name, changePools(changes)), Ordered, ContinueOnFailure, func() {
		w := &kubeletWave{changes: changes}
		AfterAll(func(ctx SpecContext) { w.restore(ctx) }, NodeTimeout(6*time.Minute))
		for _, c := range changes {
			It(text(c), func(ctx SpecContext) {
				in := inputGetter()
				in.Check(name)
				w.ensure(ctx, in.Env)
				w.expect(ctx, in.Env, c)
			}, SpecTimeout(10*time.Minute))
		}
	})
}

func (w *kubeletWave) ensure(ctx SpecContext, e *framework.Env) {
	GinkgoHelper()
	w.once(func() { w.run(ctx, e) }, "changing the wave's kubelets (%s)", changePools(w.changes))
}

// run changes every kubelet, then observes each step for all pools
// before the next: each wait overlaps the others' instead of following them.
func (w *kubeletWave) run(ctx SpecContext, e *framework.Env) {
	w.env, w.seen = e, map[string]*changeSeen{}
	for _, c := range w.changes {
		name, node := e.PoolNode(ctx, c.pool)
		w.seen[c.pool.Name] = &changeSeen{name: name, node: node, before: framework.SortedCopy(e.DeclaredOf(ctx, name))}
	}
	for _, c := range w.changes {
		if len(c.trap) > 0 {
			s := w.seen[c.pool.Name]
			By(fmt.Sprintf("the trap on %s: the %s kubelet with gates it does not know (%s)", s.name, c.older, strings.Join(c.trap, ",")))
			_, err := surgery.WriteKubeletGates(s.node, c.pool.Kubelet.FeatureGates)
			Expect(err).NotTo(HaveOccurred())
			Expect(surgery.SwapKubelet(s.node, c.older)).To(Succeed())
		}
	}
	for _, c := range w.changes {
		if s := w.seen[c.pool.Name]; len(c.trap) > 0 {
			err := wait.Until(ctx, wait.KubeletSync, "the "+c.older+" kubelet on "+s.name+" to refuse "+strings.Join(c.trap, ","), func(context.Context) (bool, string, error) {
				return strings.Contains(surgery.KubeletLog(s.node, 200), "unrecognized feature gate"), "no refusal in the journal yet", nil
			})
			s.trapped = err == nil
		}
	}
	for _, c := range w.changes {
		s := w.seen[c.pool.Name]
		By(fmt.Sprintf("the safe order on %s: %s", s.name, c.cause))
		_, err := surgery.DropKubeletFeatures(ctx, e.DropInput(c.pool, s.name, s.node, c.after))
		Expect(err).NotTo(HaveOccurred())
		if c.older != "" {
			Expect(surgery.SwapKubelet(s.node, c.older)).To(Succeed())
		}
		Expect(surgery.Cordon(ctx, e.Clientset, s.name, false)).To(Succeed())
	}
	for _, c := range w.changes {
		e.WaitKubelet(ctx, w.seen[c.pool.Name].name, c.older, c.after.Gates)
	}
	// Two renewals: each kubelet had its chances to rewrite the set.
	for _, c := range w.changes {
		e.WaitLeaseRenewals(ctx, w.seen[c.pool.Name].name, 2)
	}
	var stalePools []string
	for _, c := range w.changes {
		s := w.seen[c.pool.Name]
		s.after = framework.SortedCopy(e.DeclaredOf(ctx, s.name))
		if !c.publishes() {
			stalePools = append(stalePools, c.pool.Name)
		}
	}
	if len(stalePools) == 0 {
		return
	}
	By(fmt.Sprintf("one probe of pools %v", stalePools))
	w.code, w.verdict = e.ProbeVerdictOn(ctx, stalePools)

	By("the operator's fix on every stale node: clearing status.declaredFeatures")
	ns := e.Namespace(ctx, "wave")
	probe := framework.FeaturePod(e.Topology, restartAll)
	for _, c := range w.changes {
		s := w.seen[c.pool.Name]
		if c.publishes() || !slices.Contains(s.after, restartAll) {
			continue
		}
		s.trusted = e.Place(ctx, ns, framework.PoolPod("trusts-stale-"+c.pool.Name, c.pool, probe.Apply))
	}
	for _, c := range w.changes {
		s := w.seen[c.pool.Name]
		if s.trusted.Pod == "" {
			continue
		}
		if s.trusted.Node == s.name {
			s.trustedPhase = e.WaitRunning(ctx, ns, s.trusted.Pod).Status.Phase
		}
		Expect(e.Clientset.CoreV1().Pods(ns).Delete(ctx, s.trusted.Pod, metav1.DeleteOptions{})).To(Succeed())
	}
	for _, c := range w.changes {
		if !c.publishes() {
			Expect(e.PatchDeclared(ctx, w.seen[c.pool.Name].name, nil)).To(Succeed())
		}
	}
	for _, c := range w.changes {
		if !c.publishes() {
			e.WaitLeaseRenewals(ctx, w.seen[c.pool.Name].name, 2)
		}
	}
	for _, c := range w.changes {
		if c.publishes() {
			continue
		}
		s := w.seen[c.pool.Name]
		s.cleared = e.DeclaredOf(ctx, s.name)
		// Judged against the plan, not the gates the kubelet reports itself.
		want := framework.SortedCopy(c.after.MustDeclare())
		s.clearedOK = slices.Equal(framework.SortedCopy(s.cleared), want)
		s.clearedWhy = fmt.Sprintf("declares %v, the planned %s kubelet %v", s.cleared, c.after.Minor(), want)
	}
}

// expect is one pool's outcome of the wave.
func (w *kubeletWave) expect(ctx SpecContext, e *framework.Env, c kubeletChange) {
	GinkgoHelper()
	s := w.seen[c.pool.Name]
	if len(c.trap) > 0 {
		Expect(s.trapped).To(BeTrue(), "the %s kubelet on %s started with gates it does not know (%s)", c.older, s.name, strings.Join(c.trap, ","))
		framework.Record(report.Observation{Kind: report.KindFinding, Pool: c.pool.Name, Node: s.name, OK: true,
			Text: fmt.Sprintf("kubelet %s does not start with %s: unrecognized feature gate; a downgrade must drop them", c.older, strings.Join(c.trap, ","))})
	}
	if want := c.after.MustDeclare(); want != nil {
		// A publishing older kubelet overwrites the set with its own: what
		// only the newer minor declared goes, the rest stays.
		Expect(s.after).To(Equal(framework.SortedCopy(want)), "%s: %s declares what the %s oracle says", c.cause, s.name, c.after.Minor())
		framework.Record(report.Observation{Kind: report.KindMeasure, Pool: c.pool.Name, Node: s.name, OK: true,
			Text: fmt.Sprintf("%s: declared %s, then %s (dropped %s)", c.cause, framework.DescribeSet(s.before), framework.DescribeSet(want), framework.DescribeSet(probes.Without(s.before, want)))})
		return
	}
	Expect(s.before).NotTo(BeEmpty(), "precondition: %s declared something before the change", s.name)
	Expect(s.after).To(Equal(s.before), "%s: a kubelet that publishes nothing leaves the declarations of the kubelet before it", c.cause)
	framework.RecordStale(c.pool.Name, s.name, c.cause, s.after)

	By("the probe holds on declared-but-not-enabled")
	Expect(w.code).To(Equal(1), "probe verdict %s: %v", w.verdict.Outcome, w.verdict.Reasons)
	Expect(w.verdict.Holds(verdict.DeclaredButNotEnabled, c.pool.Name, s.name)).To(BeTrue(),
		"the probe should hold on %s [%s/%s]; it said %s %v", verdict.DeclaredButNotEnabled, c.pool.Name, s.name, w.verdict.Outcome, w.verdict.Reasons)

	By("clearing status.declaredFeatures")
	if slices.Contains(s.after, restartAll) {
		Expect(s.trusted.Node).To(Equal(s.name), "stale declarations: the scheduler still trusts them (%s)", s.trusted.Message)
		Expect(s.trustedPhase).To(Equal(corev1.PodRunning), "the silent kubelet runs the pod it was given")
		framework.Record(report.Observation{Kind: report.KindFinding, Pool: c.pool.Name, Node: s.name, Feature: restartAll, OK: true,
			Text: fmt.Sprintf("stale declarations: the scheduler bound a pod that needs %s to %s (%s) and that kubelet, which publishes nothing, admitted it unchecked: %s",
				restartAll, s.name, c.cause, s.trustedPhase)})
	}
	Expect(s.cleared).To(BeEmpty(), "cleared declarations came back")
	Expect(s.clearedOK).To(BeTrue(), "after clearing: %s", s.clearedWhy)
	ns := e.Namespace(ctx, "cleared")
	refused := e.Place(ctx, ns, framework.PoolPod("refused", c.pool, framework.FeaturePod(e.Topology, restartAll).Apply))
	Expect(refused.Node).To(BeEmpty(), "feature pod bound to %s after its declarations were cleared", s.name)
	Expect(refused.Message).To(ContainSubstring(fixtures.SchedulerRefusal(framework.CPMinor(e.Topology), restartAll)))
}

// restore starts every changed kubelet's restore, then waits for each.
func (w *kubeletWave) restore(ctx SpecContext) {
	if w.env == nil {
		return
	}
	for _, c := range w.changes {
		if s, ok := w.seen[c.pool.Name]; ok {
			w.env.StartRestore(ctx, c.pool, s.name, s.node, c.older != "")
		}
	}
	for _, c := range w.changes {
		if s, ok := w.seen[c.pool.Name]; ok {
			w.env.FinishRestore(ctx, c.pool, s.name)
		}
	}
}

func changePools(changes []kubeletChange) string {
	pools := make([]topology.Pool, len(changes))
	for i, c := range changes {
		pools[i] = c.pool
	}
	return joinPools(pools)
}
