package wait

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeReady is the node's Ready condition.
func NodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// PodReady is the pod's Ready condition.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ForPodRunning waits (wait-pod-running) until the pod is Running and Ready,
// and returns it; a pod that fails ends the wait with its reason.
func ForPodRunning(ctx context.Context, cs kubernetes.Interface, namespace, name string) (*corev1.Pod, error) {
	return ForPodStarted(ctx, cs, namespace, name, nil)
}

// ForPodStarted waits (pod-running) until started says the pod is as far
// as the caller needs (nil: Running and Ready); a Failed pod ends the wait.
func ForPodStarted(ctx context.Context, cs kubernetes.Interface, namespace, name string, started func(*corev1.Pod) bool) (*corev1.Pod, error) {
	what := "Running and Ready"
	if started == nil {
		started = func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && PodReady(p) }
	} else {
		what = "started"
	}
	var pod *corev1.Pod
	err := Until(ctx, PodRunning, "pod "+name+" "+what, func(ctx context.Context) (bool, string, error) {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		pod = p
		if p.Status.Phase == corev1.PodFailed {
			return false, "", fmt.Errorf("pod %s failed on %s: %s %s", name, p.Spec.NodeName, p.Status.Reason, p.Status.Message)
		}
		return started(p), fmt.Sprintf("phase %s on %q", p.Status.Phase, p.Spec.NodeName), nil
	})
	return pod, err
}

// ForDefaultServiceAccount waits (wait-api) for a new namespace's default
// ServiceAccount: pods created before it exists are refused.
func ForDefaultServiceAccount(ctx context.Context, cs kubernetes.Interface, namespace string) error {
	return Until(ctx, API, "ServiceAccount default in "+namespace, func(ctx context.Context) (bool, string, error) {
		_, err := cs.CoreV1().ServiceAccounts(namespace).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
}
