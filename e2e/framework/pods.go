package framework

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/fixtures/claims"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// PoolPod is a probe pod steered to pool, shaped by shape (nil: a control pod).
func PoolPod(name string, pool topology.Pool, shape func(*corev1.Pod)) *corev1.Pod {
	pod := fixtures.BasePod(name, topology.PoolLabel, pool.Name)
	if shape != nil {
		shape(pod)
	}
	return pod
}

// Place creates the pod and returns the scheduler's decision.
func (e *Env) Place(ctx context.Context, ns string, pod *corev1.Pod) probes.Placement {
	GinkgoHelper()
	res, err := probes.Place(ctx, e.Clientset, ns, pod)
	Expect(err).NotTo(HaveOccurred())
	return res
}

// RunningPod places a shaped probe pod on the pool and waits until it runs.
func (e *Env) RunningPod(ctx context.Context, ns, name string, pool topology.Pool, shape func(*corev1.Pod)) *corev1.Pod {
	GinkgoHelper()
	res := e.Place(ctx, ns, PoolPod(name, pool, shape))
	Expect(res.Node).NotTo(BeEmpty(), "pod %s not bound on %s: %s", name, pool.Name, res.Message)
	return e.WaitRunning(ctx, ns, name)
}

// WaitRunning waits until the pod is Running and Ready.
func (e *Env) WaitRunning(ctx context.Context, ns, name string) *corev1.Pod {
	GinkgoHelper()
	pod, err := wait.ForPodRunning(ctx, e.Clientset, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return pod
}

// WaitPodFailed waits until the kubelet fails the pod and returns it.
func (e *Env) WaitPodFailed(ctx context.Context, ns, name string) *corev1.Pod {
	GinkgoHelper()
	return e.waitPod(ctx, wait.PodRunning, ns, name, "to be failed by its kubelet", func(p *corev1.Pod) (bool, string) {
		return p.Status.Phase == corev1.PodFailed, string(p.Status.Phase)
	})
}

// waitPod polls the pod with the named interval until done says so.
func (e *Env) waitPod(ctx context.Context, interval wait.Name, ns, name, what string, done func(*corev1.Pod) (bool, string)) *corev1.Pod {
	GinkgoHelper()
	var pod *corev1.Pod
	Expect(wait.Until(ctx, interval, "pod "+name+" "+what, func(ctx context.Context) (bool, string, error) {
		p, err := e.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		pod = p
		ok, reason := done(p)
		return ok, reason, nil
	})).To(Succeed())
	return pod
}

// PodsIn lists the namespace's pods.
func (e *Env) PodsIn(ctx context.Context, ns string) []corev1.Pod {
	GinkgoHelper()
	list, err := e.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	return list.Items
}

// KubeletOutcome binds a pod that needs probe's feature, shaped to use its
// rule (fixtures.RuleExercise), to the pool's first node past the
// scheduler, and says what its kubelet did: PodFeatureUnsupported, the rule
// honoured (the sibling restarted when main exited), or the rule ignored.
func (e *Env) KubeletOutcome(ctx context.Context, pool topology.Pool, probe fixtures.SchedulingProbe) (node, seen string, res probes.Admission) {
	GinkgoHelper()
	ns := e.Namespace(ctx, "kadm")
	node, _ = e.PoolNode(ctx, pool)
	pod := PoolPod("bound", pool, probe.Apply)
	fixtures.RuleExercise(pod)
	res, err := probes.BindDirectly(ctx, e.Clientset, ns, node, pod)
	Expect(err).NotTo(HaveOccurred())
	if res.Rejected() {
		return node, res.Reason, res
	}
	restarted, err := probes.ExerciseRule(ctx, e.Clientset, ns, pod.Name, fixtures.ExercisedContainer, fixtures.SiblingContainer, fixtures.RuleExitCode)
	Expect(err).NotTo(HaveOccurred())
	if restarted {
		return node, claims.Honoured, res
	}
	return node, claims.Ignored, res
}

// WaitBound waits (wait-scheduling) until the pod is bound to a node.
func (e *Env) WaitBound(ctx context.Context, ns, name string) *corev1.Pod {
	GinkgoHelper()
	return e.waitPod(ctx, wait.Scheduling, ns, name, "to be bound", func(p *corev1.Pod) (bool, string) {
		return p.Spec.NodeName != "", "not bound"
	})
}
