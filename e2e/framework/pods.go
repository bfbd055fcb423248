package framework

import (
	"context"
	"fmt"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/fixtures/claims"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
	"github.com/ndfq/ndfq/report"
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
	return e.StartedPod(ctx, ns, name, pool, shape, nil)
}

// StartedPod places a shaped probe pod on the pool and waits until
// started says so (nil: Running and Ready).
func (e *Env) StartedPod(ctx context.Context, ns, name string, pool topology.Pool, shape func(*corev1.Pod), started func(*corev1.Pod) bool) *corev1.Pod {
	GinkgoHelper()
	res := e.Place(ctx, ns, PoolPod(name, pool, shape))
	Expect(res.Node).NotTo(BeEmpty(), "pod %s not bound on %s: %s", name, pool.Name, res.Message)
	pod, err := wait.ForPodStarted(ctx, e.Clientset, ns, name, started)
	Expect(err).NotTo(HaveOccurred())
	return pod
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

// KubeletOutcome binds a pod that needs probe's feature, shaped by its
// exercise, to the pool's first node past the scheduler, and says what its
// kubelet did: PodFeatureUnsupported, its sandbox refused, or the feature
// honoured or ignored (as the pod reports it, or, for a rule, whether the
// sibling restarted when main exited).
func (e *Env) KubeletOutcome(ctx context.Context, pool topology.Pool, probe fixtures.SchedulingProbe) (node, seen string, res probes.Admission) {
	GinkgoHelper()
	ns := e.Namespace(ctx, "kadm")
	node, _ = e.PoolNode(ctx, pool)
	pod := PoolPod("bound", pool, probe.Apply)
	if probe.Exercise != nil {
		probe.Exercise(pod)
	}
	res, err := probes.BindDirectly(ctx, e.Clientset, ns, node, pod)
	Expect(err).NotTo(HaveOccurred())
	if res.Rejected() || probe.Exercise == nil {
		return node, res.Reason, res
	}
	if res.SandboxRefused != "" {
		return node, claims.SandboxRefused, res
	}
	if probe.SelfReports {
		// BindDirectly may return while the check still runs (Running and
		// Ready): its answer is the phase it ends in.
		done := e.waitPod(ctx, wait.PodRunning, ns, pod.Name, "to end its exercise", func(p *corev1.Pod) (bool, string) {
			return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, string(p.Status.Phase)
		})
		res.Phase = done.Status.Phase
		Expect(res.Phase).To(Equal(corev1.PodSucceeded), "the exercise of %s on %s", probe.Feature, node)
		return node, e.terminationMessage(ctx, ns, pod.Name), res
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

// Runtime is what the oracle knows of the pool's runtime, with this host's
// cgroup version (kind nodes share the Docker host's hierarchy).
func Runtime(pool topology.Pool) fixtures.Runtime {
	rt := pool.Intent().Runtime
	rt.CgroupV1 = kindconfig.HostIsCgroupV1()
	return rt
}

// ExpectResizeOutcome waits (pod-running) until the declaring pool's
// kubelet has applied an admitted update, or, where the oracle says this
// runtime makes it infeasible, until the kubelet says so in those words
// (recorded as a finding: the kubelet declares what it then refuses).
func (e *Env) ExpectResizeOutcome(ctx context.Context, pool topology.Pool, probe fixtures.UpdateProbe, pod *corev1.Pod) {
	GinkgoHelper()
	infeasible := ""
	if probe.Infeasible != nil {
		infeasible = probe.Infeasible(Runtime(pool))
	}
	what := "to apply the resize"
	if infeasible != "" {
		what = "to call the resize infeasible: " + infeasible
	}
	got := e.waitPod(ctx, wait.PodRunning, pod.Namespace, pod.Name, what, func(p *corev1.Pod) (bool, string) {
		seen := fmt.Sprintf("generation %d observed %d, resize infeasible %q, conditions %v", p.Generation, p.Status.ObservedGeneration, fixtures.ResizeInfeasible(p), p.Status.Conditions)
		if infeasible != "" {
			return fixtures.ResizeInfeasible(p) == infeasible, seen
		}
		return probe.Applied(p), seen
	})
	if infeasible != "" {
		Record(report.Observation{Kind: report.KindFinding, Pool: pool.Name, Node: got.Spec.NodeName, Feature: probe.Feature, OK: true,
			Text: fmt.Sprintf("F14: %s declares %s and its apiserver admits the update, yet the kubelet leaves it pending: Infeasible %q", got.Spec.NodeName, probe.Feature, infeasible)})
	}
}

// terminationMessage is what the pod's first container wrote when it ended.
func (e *Env) terminationMessage(ctx context.Context, ns, name string) string {
	GinkgoHelper()
	p, err := e.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	if s := fixtures.ContainerStatus(p.Status.ContainerStatuses, p.Spec.Containers[0].Name); s != nil && s.State.Terminated != nil {
		return strings.TrimSpace(s.State.Terminated.Message)
	}
	Fail(fmt.Sprintf("pod %s ended without its container's termination message: %+v", name, p.Status.ContainerStatuses))
	return ""
}

// PodHistory is what a watch saw of one pod: every phase it reported, the
// last status reason, and whether its deletion began.
type PodHistory struct {
	Phases   []corev1.PodPhase
	Reason   string
	Deleting bool
}

// WatchPod watches the pod from now on; the returned func stops the watch
// and says what it saw, so a claim about every state a pod went through
// does not rest on one look after it may be gone.
func (e *Env) WatchPod(ctx context.Context, ns, name string) func() PodHistory {
	GinkgoHelper()
	pod, err := e.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred(), "pod %s/%s", ns, name)
	w, err := e.Clientset.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: pod.ResourceVersion})
	Expect(err).NotTo(HaveOccurred(), "watch pod %s/%s", ns, name)
	var mu sync.Mutex
	h := PodHistory{Phases: []corev1.PodPhase{pod.Status.Phase}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			mu.Lock()
			h.Phases = append(h.Phases, p.Status.Phase)
			h.Reason = p.Status.Reason
			h.Deleting = h.Deleting || p.DeletionTimestamp != nil || ev.Type == watch.Deleted
			mu.Unlock()
		}
	}()
	return func() PodHistory {
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return h
	}
}
