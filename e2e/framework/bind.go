package framework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// BindDirectly creates the pod with spec.nodeName set (no scheduler) and
// waits (wait-pod-running) until it runs, the kubelet fails it, (a pod
// that reports and exits) it has succeeded, or the kubelet says it cannot
// create its sandbox.
func BindDirectly(ctx context.Context, cs kubernetes.Interface, namespace, node string, pod *corev1.Pod) (probes.Admission, error) {
	pod = pod.DeepCopy()
	pod.Spec.NodeName = node
	pod.Spec.Affinity = nil
	if _, err := probes.CreatePod(ctx, cs, namespace, pod); err != nil {
		return probes.Admission{Pod: pod.Name, Node: node}, fmt.Errorf("create pod %s on %s: %w", pod.Name, node, err)
	}
	res := probes.Admission{Pod: pod.Name, Node: node}
	err := wait.Until(ctx, wait.PodRunning, fmt.Sprintf("pod %s to run or be rejected on %s", pod.Name, node), func(ctx context.Context) (bool, string, error) {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		res.Phase, res.Reason, res.Message = p.Status.Phase, p.Status.Reason, p.Status.Message
		switch p.Status.Phase {
		case corev1.PodFailed, corev1.PodSucceeded:
			return true, "", nil
		case corev1.PodRunning:
			return wait.PodReady(p), "running, not ready", nil
		}
		if res.SandboxRefused, err = sandboxRefusal(ctx, cs, namespace, pod.Name); err != nil {
			return false, err.Error(), nil
		}
		return res.SandboxRefused != "", string(p.Status.Phase), nil
	})
	return res, err
}

// sandboxRefusal is the message of the pod's FailedCreatePodSandBox event, if any.
func sandboxRefusal(ctx context.Context, cs kubernetes.Interface, namespace, pod string) (string, error) {
	events, err := cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("involvedObject.name", pod), fields.OneTermEqualSelector("reason", "FailedCreatePodSandBox")).String(),
	})
	if err != nil || len(events.Items) == 0 {
		return "", err
	}
	return events.Items[0].Message, nil
}
