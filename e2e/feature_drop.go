//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
)

// FeatureDropSpecInput is the input of FeatureDropSpec.
type FeatureDropSpecInput struct{ framework.SpecInput }

// FeatureDropSpec turns one feature off on running kubelets three ways:
// the trap (restart with dependents on the node), the safe order (move
// them first), and the refusal when nowhere else keeps the feature. The
// trap and the safe order each run as a wave over every subject pool.
func FeatureDropSpec(_ context.Context, inputGetter func() FeatureDropSpecInput) {
	t := inputGetter().Topology
	var e *framework.Env
	BeforeEach(func() { in := inputGetter(); in.Check("FeatureDropSpec"); e = in.Env })

	cells := claims.Matrix(t)
	pairs, why := dropSubjects(t)
	if why != "" {
		notApplicable("turning "+restartAll+" off on a running kubelet: the trap, the safe order and the no-capacity refusal", why)
		for _, c := range cells {
			if c.Kind == claims.Queueing {
				cellIt(c, fmt.Sprintf("a pod refused for lack of %s on pool %s is bound once the node declares it again", restartAll, c.Pool), nil)
			}
		}
		return
	}
	env := func() *framework.Env { return e }
	probe := framework.FeaturePod(t, restartAll)
	for i, wave := range stopWaves(t, pairs) {
		d := &dropWave{pairs: wave, probe: probe}
		Context(fmt.Sprintf("trap wave %d: %s restarted without %s at once", i+1, joinPools(subjectsOf(wave)), restartAll), Ordered, ContinueOnFailure, func() {
			AfterAll(func(ctx SpecContext) { d.restore(ctx) }, NodeTimeout(6*time.Minute))
			for _, pair := range wave {
				trap(env, d, pair.subject)
			}
		})
		s := &dropWave{pairs: wave, probe: probe, safe: true}
		Context(fmt.Sprintf("safe-order wave %d: %s at once", i+1, joinPools(subjectsOf(wave))), Ordered, ContinueOnFailure, func() {
			AfterAll(func(ctx SpecContext) { s.restore(ctx) }, NodeTimeout(6*time.Minute))
			for _, pair := range wave {
				safeOrder(t, env, s, pair)
			}
			for _, pair := range wave {
				queueing(t, env, s, claims.Find(cells, claims.Queueing, pair.subject.Name, restartAll), pair.subject)
			}
		})
	}
	// The refusal is the safe order's own logic: one kubelet shows it.
	noCapacity(env, probe, pairs[0].subject)
}

// dropWave turns restartAll off on every subject's kubelet at once, each
// with a running dependent: as the trap (a plain restart) or in the safe
// order (dependents moved first). The first spec makes the change and
// records what each pool's dependent went through.
type dropWave struct {
	pairs []dropPair
	probe fixtures.FeaturePod
	safe  bool
	waveStart
	env  *framework.Env
	seen map[string]*dropSeen // by subject pool
	// The safe order's restore, with pods waiting for the feature (queueing).
	queue    waveStart
	queued   map[string]*queued // by subject pool
	restored bool
}

type dropSeen struct {
	name      string
	node      nodes.Node
	dependent string
	placedOn  string
	failed    corev1.PodStatus     // the trap: the dependent as its kubelet failed it
	history   framework.PodHistory // the safe order: every state of the original
	movedPool string               // the safe order: where the replacement runs
}

func (d *dropWave) ensure(ctx SpecContext, e *framework.Env) {
	GinkgoHelper()
	d.once(func() { d.run(ctx, e) }, "turning %s off on %s", restartAll, joinPools(subjectsOf(d.pairs)))
}

func (d *dropWave) run(ctx SpecContext, e *framework.Env) {
	d.env, d.seen = e, map[string]*dropSeen{}
	ns := e.Namespace(ctx, "drop")
	for _, p := range d.pairs {
		name, node := e.PoolNode(ctx, p.subject)
		placed := e.Place(ctx, ns, framework.PoolPod("dependent-"+p.subject.Name, p.subject, d.probe.Apply))
		d.seen[p.subject.Name] = &dropSeen{name: name, node: node, dependent: placed.Pod, placedOn: placed.Node}
	}
	stops := map[string]func() framework.PodHistory{}
	for _, p := range d.pairs {
		s := d.seen[p.subject.Name]
		e.WaitRunning(ctx, ns, s.dependent)
		if d.safe {
			// Every state the original goes through, to its deletion:
			// "none is failed" needs them all, not a look after it may be gone.
			stops[p.subject.Name] = e.WatchPod(ctx, ns, s.dependent)
		}
	}
	var avoid []string
	for _, p := range d.pairs {
		avoid = append(avoid, p.subject.Name)
	}
	for _, p := range d.pairs {
		s, without := d.seen[p.subject.Name], p.subject.Intent().Without(restartAll)
		if d.safe {
			By("the safe order on " + s.name + ": capacity check, cordon, move, restart")
			_, err := surgery.DropKubeletFeatures(ctx, e.DropInput(p.subject, s.name, s.node, without, avoid...))
			Expect(err).NotTo(HaveOccurred())
			continue
		}
		By("restarting the kubelet on " + s.name + " with " + surgery.FormatGatesOrNone(without.Gates) + " while its dependent runs")
		_, err := surgery.SetKubeletGates(s.node, without.Gates)
		Expect(err).NotTo(HaveOccurred())
	}
	for _, p := range d.pairs {
		s := d.seen[p.subject.Name]
		e.WaitKubelet(ctx, s.name, "", p.subject.Intent().Without(restartAll).Gates)
		if !d.safe {
			s.failed = e.WaitPodFailed(ctx, ns, s.dependent).Status
			continue
		}
		moved := e.WaitRunning(ctx, ns, s.dependent+"-moved")
		s.movedPool = e.Node(ctx, moved.Spec.NodeName).Labels[topology.PoolLabel]
	}
	for pool, stop := range stops {
		d.seen[pool].history = stop()
	}
}

// restore starts every subject's restore (once: the queueing specs may
// have), then waits for each to be as the topology has it.
func (d *dropWave) restore(ctx SpecContext) {
	d.startRestore(ctx)
	d.finishRestore(ctx)
}

func (d *dropWave) startRestore(ctx SpecContext) {
	GinkgoHelper()
	if d.env == nil || d.restored {
		return
	}
	d.restored = true
	for _, p := range d.pairs {
		if s, ok := d.seen[p.subject.Name]; ok {
			d.env.StartRestore(ctx, p.subject, s.name, s.node, false)
		}
	}
}

func (d *dropWave) finishRestore(ctx SpecContext) {
	GinkgoHelper()
	if d.env == nil {
		return
	}
	for _, p := range d.pairs {
		if s, ok := d.seen[p.subject.Name]; ok {
			d.env.FinishRestore(ctx, p.subject, s.name)
		}
	}
}

// trap: restarting subject's kubelet without the feature fails its
// running dependent.
func trap(env func() *framework.Env, d *dropWave, subject topology.Pool) {
	without := subject.Intent().Without(restartAll)
	It(fmt.Sprintf("restarting the kubelet of %s without %s fails the running pods that need it (PodFeatureUnsupported): the trap the safe order avoids", framework.PoolDesc(subject), restartAll), func(ctx SpecContext) {
		e := env()
		d.ensure(ctx, e)
		s := d.seen[subject.Name]
		Expect(s.placedOn).To(Equal(s.name), "the dependent ran on the subject's node")
		Expect(s.failed.Reason).To(Equal(fixtures.KubeletRejectionReason), "status %+v", s.failed)
		Expect(s.failed.Message).To(ContainSubstring(fixtures.KubeletRejectionMessage(restartAll)))
		e.WaitDeclared(ctx, s.name, without.MustDeclare())
		framework.Record(report.Observation{Kind: report.KindFinding, Pool: subject.Name, Node: s.name, Feature: restartAll, OK: true,
			Text: "kubelet restarted with the feature's gate off failed its running dependent pod: " + s.failed.Reason})
	}, SpecTimeout(8*time.Minute))
}

// safeOrder: the safe order on subject moves its dependent to the
// fallback before the gate goes.
func safeOrder(t *topology.Topology, env func() *framework.Env, d *dropWave, pair dropPair) {
	subject, fallback := pair.subject, pair.fallback
	without := subject.Intent().Without(restartAll)
	It(fmt.Sprintf("the safe order on %s moves dependent pods to %s before the gate goes: none is failed and the node stops declaring %s", framework.PoolDesc(subject), fallback.Name, restartAll), func(ctx SpecContext) {
		e := env()
		d.ensure(ctx, e)
		s := d.seen[subject.Name]
		e.WaitDeclared(ctx, s.name, without.MustDeclare())
		Expect(s.history.Deleting).To(BeTrue(), "the original is deleted once its replacement runs (seen: %v)", s.history.Phases)
		Expect(s.history.Phases).NotTo(ContainElement(corev1.PodFailed), "the original was failed by its kubelet: %s", s.history.Reason)
		Expect(s.movedPool).To(Equal(fallback.Name), "where the replacement runs")
		By("uncordoned, the node no longer takes what it cannot run")
		Expect(surgery.Cordon(ctx, e.Clientset, s.name, false)).To(Succeed())
		ns := e.Namespace(ctx, "safe")
		res := e.Place(ctx, ns, framework.PoolPod("after", subject, d.probe.Apply))
		Expect(res.Node).To(BeEmpty(), "feature pod bound to %s after it dropped the feature", s.name)
		Expect(res.Message).To(ContainSubstring(fixtures.SchedulerRefusal(framework.CPMinor(t), restartAll)))
	}, SpecTimeout(8*time.Minute))
}

// noCapacity asks the safe order to drop the feature on subject while no
// other node keeps it: it refuses and changes nothing.
func noCapacity(env func() *framework.Env, probe fixtures.FeaturePod, subject topology.Pool) {
	It(fmt.Sprintf("the safe order refuses to close gates on %s when no other node keeps %s, and changes nothing", framework.PoolDesc(subject), restartAll), func(ctx SpecContext) {
		e := env()
		name, node := e.PoolNode(ctx, subject)
		ns := e.Namespace(ctx, "nocap")
		e.RunningPod(ctx, ns, "dependent", subject, probe.Apply)
		var cordoned []string
		DeferCleanup(func(ctx SpecContext) {
			for _, n := range cordoned {
				Expect(surgery.Cordon(ctx, e.Clientset, n, false)).To(Succeed())
			}
		})
		By("cordoning every other node that declares " + restartAll)
		all, err := probes.Declarations(ctx, probes.DeclarationsInput{Clientset: e.Clientset, PoolLabel: topology.PoolLabel})
		Expect(err).NotTo(HaveOccurred())
		for _, d := range all {
			if d.Node != name && slices.Contains(d.Declared, restartAll) {
				Expect(surgery.Cordon(ctx, e.Clientset, d.Node, true)).To(Succeed())
				cordoned = append(cordoned, d.Node)
			}
		}
		before, err := surgery.KubeletGates(node)
		Expect(err).NotTo(HaveOccurred())
		_, err = surgery.DropKubeletFeatures(ctx, e.DropInput(subject, name, node, subject.Intent().With(map[string]bool{restartAll: false})))
		var noCap *surgery.NoCapacityError
		Expect(errors.As(err, &noCap)).To(BeTrue(), "got %v", err)
		Expect(err.Error()).To(ContainSubstring("not closing gates on %s", name))
		after, err := surgery.KubeletGates(node)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(Equal(before), "the kubelet's gates were changed anyway")
		Expect(e.Node(ctx, name).Spec.Unschedulable).To(BeFalse(), "the node was cordoned anyway")
	}, SpecTimeout(4*time.Minute))
}
