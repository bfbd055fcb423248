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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/e2e/framework"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
)

// The queueing claim rides the safe-order wave of the feature-drop
// scenario: its subjects' nodes have just stopped declaring restartAll.
// A pod that needs it waits on each, refused; an update of the node that
// declares nothing new leaves it waiting; the wave's restore makes each
// node declare the feature again, and the scheduler must requeue the pod
// on that node update (the plugin's queueing hint), not after a backoff.

// queued is what one subject's waiting pod went through.
type queued struct {
	pod, refusal string
	nudgedTo     string // a node it was bound to while only the nudge had happened
	declaredAt   time.Time
	boundAt      time.Time
	boundTo      string
}

// nudgeLabel is the label whose change is the node update that declares nothing new.
const nudgeLabel = "ndfq.io/queueing-nudge"

func queueing(t *topology.Topology, env func() *framework.Env, d *dropWave, cell claims.Cell, subject topology.Pool) {
	bound := wait.MustGet(wait.QueueingBind).Timeout
	text := fmt.Sprintf("a pod refused for lack of %s on %s stays Pending through an update of the node that declares nothing new, and is bound within %s once the node declares it again", restartAll, framework.PoolDesc(subject), bound)
	cellIt(cell, text, func(ctx SpecContext) {
		e := env()
		d.ensure(ctx, e)
		d.queue.once(func() { d.requeue(ctx, e) }, "restoring %s with pods waiting for %s", joinPools(subjectsOf(d.pairs)), restartAll)
		q, s := d.queued[subject.Name], d.seen[subject.Name]
		Expect(q.refusal).To(ContainSubstring(fixtures.SchedulerRefusal(framework.CPMinor(t), restartAll)), "why pod %s first waited", q.pod)
		Expect(q.nudgedTo).To(BeEmpty(), "pod %s was bound to %s after a node update that declared nothing new", q.pod, q.nudgedTo)
		seen, took := "refused", q.boundAt.Sub(q.declaredAt)
		switch {
		case q.boundTo != "" && took <= bound:
			seen = claims.Bound
		case q.boundTo != "":
			seen = "bound after " + took.Round(time.Second).String()
		}
		if q.boundTo != "" && q.boundTo != s.name {
			seen = "bound to another node, " + q.boundTo
		}
		framework.RecordCell(cell, s.name, seen, fmt.Sprintf("bound %s after the node declared the feature again (polled every %s)", took.Round(time.Second), wait.MustGet(wait.KubeletSync).Every))
		Expect(q.boundTo).To(Equal(s.name), "pod %s, waiting for %s, where it was bound (node %s declared it at %s)", q.pod, restartAll, s.name, q.declaredAt.Format(time.TimeOnly))
		Expect(took).To(BeNumerically("<=", bound), "pod %s was bound %s after node %s declared %s", q.pod, took, s.name, restartAll)
	}, SpecTimeout(8*time.Minute))
}

// requeue places a waiting pod on every subject, nudges the nodes, then
// restores the wave and times each node's declaration and pod's binding.
func (d *dropWave) requeue(ctx SpecContext, e *framework.Env) {
	ns := e.Namespace(ctx, "queue")
	d.queued = map[string]*queued{}
	for _, p := range d.pairs {
		s := d.seen[p.subject.Name]
		Expect(surgery.Cordon(ctx, e.Clientset, s.name, false)).To(Succeed())
		res := e.Place(ctx, ns, framework.PoolPod("waiting-"+p.subject.Name, p.subject, d.probe.Apply))
		Expect(res.Node).To(BeEmpty(), "pod needing %s bound to %s, which had stopped declaring it", restartAll, res.Node)
		d.queued[p.subject.Name] = &queued{pod: res.Pod, refusal: res.Message}
	}

	By("an update of each subject's node that declares nothing new (label " + nudgeLabel + ")")
	DeferCleanup(func(ctx SpecContext) { d.nudge(ctx, e, nil) })
	d.nudge(ctx, e, ptr.To(time.Now().Format("150405")))
	window := wait.MustGet(wait.QueueingNudge)
	reads, err := wait.Watch(ctx, wait.QueueingNudge, "the waiting pods after the nudge", func(ctx context.Context) error {
		for _, q := range d.queued {
			pod, err := e.Clientset.CoreV1().Pods(ns).Get(ctx, q.pod, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if q.nudgedTo == "" {
				q.nudgedTo = pod.Spec.NodeName
			}
		}
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	By(fmt.Sprintf("watched %s (%d reads of every waiting pod); restoring every subject's kubelet, so each node declares %s again", window.Timeout, reads, restartAll))
	d.startRestore(ctx)
	err = wait.Until(ctx, wait.KubeletSync, "waiting pods bound once their nodes declare "+restartAll, func(ctx context.Context) (bool, string, error) {
		var pending []string
		for pool, q := range d.queued {
			now := time.Now()
			if q.declaredAt.IsZero() {
				if n, err := e.Clientset.CoreV1().Nodes().Get(ctx, d.seen[pool].name, metav1.GetOptions{}); err == nil && slices.Contains(n.Status.DeclaredFeatures, restartAll) {
					q.declaredAt = now
				}
			}
			if q.boundTo == "" {
				if pod, err := e.Clientset.CoreV1().Pods(ns).Get(ctx, q.pod, metav1.GetOptions{}); err == nil && pod.Spec.NodeName != "" {
					q.boundAt, q.boundTo = now, pod.Spec.NodeName
				}
			}
			if q.declaredAt.IsZero() || q.boundTo == "" {
				pending = append(pending, pool)
			}
		}
		return len(pending) == 0, "declared or bound not yet seen on " + strings.Join(pending, ", "), nil
	})
	if err != nil {
		By("not every waiting pod was bound: " + err.Error())
	}
	d.finishRestore(ctx)
}

// nudge sets (or, with nil, removes) the nudge label on every subject's node.
func (d *dropWave) nudge(ctx context.Context, e *framework.Env, value *string) {
	GinkgoHelper()
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, nudgeLabel)
	if value != nil {
		patch = fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, nudgeLabel, *value)
	}
	for _, p := range d.pairs {
		_, err := e.Clientset.CoreV1().Nodes().Patch(ctx, d.seen[p.subject.Name].name, types.MergePatchType, patch, metav1.PatchOptions{})
		Expect(err).NotTo(HaveOccurred())
	}
}
