package probes

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/internal/wait"
)

// CleanupInput says what `ndfq probe cleanup` removes.
type CleanupInput struct {
	Clientset kubernetes.Interface
	// Namespace limits it to the probe pods of one namespace the probe
	// keeps (-n); "" removes every namespace a run made and every probe
	// pod in any other namespace.
	Namespace string
	RunID     string // only this run's; "" for every run's
	Progress  func(format string, args ...any)
}

// Leftovers is what earlier runs left and Cleanup removed.
type Leftovers struct {
	Namespaces []string // namespaces a run made
	Pods       []string // namespace/name, outside those namespaces
	Nodes      []string // synthetic nodes a run added
}

// Cleanup removes what earlier probe runs left behind (a SIGKILL, a node
// lost mid-run): everything carries RunLabel, a synthetic node too. It waits, bounded
// (wait-pods-gone), until the pods are gone from their nodes.
func Cleanup(ctx context.Context, in CleanupInput) (Leftovers, error) {
	say := in.Progress
	if say == nil {
		say = func(string, ...any) {}
	}
	selector := RunLabel
	if in.RunID != "" {
		selector += "=" + in.RunID
	}
	var out Leftovers
	if in.Namespace == "" {
		nodes, err := in.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return out, fmt.Errorf("list synthetic nodes: %w", err)
		}
		for _, n := range nodes.Items {
			say("deleting synthetic node %s (run %s)", n.Name, n.Labels[RunLabel])
			if _, err := removeSyntheticNode(ctx, in.Clientset, n.Name); err != nil {
				return out, err
			}
			out.Nodes = append(out.Nodes, n.Name)
		}
		nss, err := in.Clientset.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return out, fmt.Errorf("list probe namespaces: %w", err)
		}
		for _, ns := range nss.Items {
			say("deleting namespace %s (run %s)", ns.Name, ns.Labels[RunLabel])
			if err := in.Clientset.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return out, fmt.Errorf("delete namespace %s: %w", ns.Name, err)
			}
			out.Namespaces = append(out.Namespaces, ns.Name)
		}
	}
	pods, err := in.Clientset.CoreV1().Pods(in.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return out, fmt.Errorf("list probe pods: %w", err)
	}
	var left []types.NamespacedName
	for _, pod := range pods.Items {
		left = append(left, types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name})
		if slices.Contains(out.Namespaces, pod.Namespace) {
			continue // the namespace's deletion takes them, but they are waited for
		}
		out.Pods = append(out.Pods, pod.Namespace+"/"+pod.Name)
		// The grace period the run itself deletes with: probe images exit on SIGTERM.
		if err := in.Clientset.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}); err != nil && !apierrors.IsNotFound(err) {
			return out, fmt.Errorf("delete pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	if len(left) == 0 {
		return out, nil
	}
	say("waiting for %d probe pods to be gone", len(left))
	return out, waitPodsGone(ctx, in.Clientset, left)
}

// waitPodsGone waits (wait-pods-gone) until the pods are gone from their
// nodes, as kubectl delete waits: a drain or a kubelet restart right after
// must not find them there.
func waitPodsGone(ctx context.Context, cs kubernetes.Interface, left []types.NamespacedName) error {
	// One list of the probe's pods per namespace a poll, not a get per pod:
	// a whole fleet's run leaves ~150, which at --qps 20 took seconds a poll.
	return wait.Until(ctx, wait.PodsGone, fmt.Sprintf("%d probe pods gone", len(left)), func(ctx context.Context) (bool, string, error) {
		there := map[types.NamespacedName]bool{}
		for _, ns := range namespacesOf(left) {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: RunLabel})
			if err != nil {
				return false, err.Error(), nil
			}
			for _, pod := range pods.Items {
				there[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = true
			}
		}
		left = slices.DeleteFunc(left, func(n types.NamespacedName) bool { return !there[n] })
		if len(left) > 0 {
			return false, fmt.Sprintf("%d left, %s among them", len(left), left[0]), nil
		}
		return true, "", nil
	})
}

// namespacesOf are the namespaces of pods, each once.
func namespacesOf(pods []types.NamespacedName) []string {
	var out []string
	for _, p := range pods {
		if !slices.Contains(out, p.Namespace) {
			out = append(out, p.Namespace)
		}
	}
	return out
}
