package framework

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
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

// NodePod is a pod steered to one node by name. The scheduler's
// NodeAffinity PreFilter then weighs that node alone, so a refusal's
// reasons are that node's (every other node is counted as not matching
// NodeAffinity), not those of other nodes a wave took down.
func NodePod(name, node string, shape func(*corev1.Pod)) *corev1.Pod {
	pod := fixtures.BasePod(name, "", "")
	pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
	}}
	if shape != nil {
		shape(pod)
	}
	return pod
}

// AnyPod is a control pod with no affinity: the scheduler may put it on
// any node that takes it.
func AnyPod(name string) *corev1.Pod {
	pod := fixtures.BasePod(name, "", "")
	pod.Spec.Affinity = nil
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

// WaitBound waits (wait-scheduling) until the pod is bound to a node.
func (e *Env) WaitBound(ctx context.Context, ns, name string) *corev1.Pod {
	GinkgoHelper()
	return e.waitPod(ctx, wait.Scheduling, ns, name, "to be bound", func(p *corev1.Pod) (bool, string) {
		return p.Spec.NodeName != "", "not bound"
	})
}

// NodeRuntime is what the oracle knows of the pool's runtime, with the
// node's own cgroup version as the node sees it (the file system of its
// /sys/fs/cgroup), never assumed from the Docker host.
func (e *Env) NodeRuntime(ctx context.Context, pool topology.Pool, node string) fixtures.Runtime {
	GinkgoHelper()
	rt := pool.Intent().Runtime
	kn, err := e.Cluster.KindNode(node)
	Expect(err).NotTo(HaveOccurred())
	var out, errOut bytes.Buffer
	err = kn.CommandContext(ctx, "stat", "-f", "-c", "%T", "/sys/fs/cgroup").SetStdout(&out).SetStderr(&errOut).Run()
	Expect(err).NotTo(HaveOccurred(), "the cgroup file system of node %s: %s", node, errOut.String())
	switch fsType := strings.TrimSpace(out.String()); fsType {
	case "cgroup2fs":
		rt.CgroupV1 = false
	case "tmpfs":
		rt.CgroupV1 = true
	default:
		Fail(fmt.Sprintf("node %s's /sys/fs/cgroup is %q: neither cgroup v2 (cgroup2fs) nor v1 (tmpfs)", node, fsType))
	}
	return rt
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
