package framework

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/internal/wait"
)

// ExerciseRule watches a running pod shaped by fixtures.RuleExercise: once
// its main container has exited with the rule's code, the sibling is
// watched for a window (watch-restart-rule). It reports whether the
// sibling was restarted: a kubelet that honours the rule restarts it.
// "Not restarted" needs positive evidence: every poll of the window saw
// the sibling running as before, and the node's kubelet renewed its Lease
// after the window opened. Anything less is an error, not a verdict.
func ExerciseRule(ctx context.Context, cs kubernetes.Interface, namespace, pod, main, sibling string, code int32) (siblingRestarted bool, err error) {
	status := func(p *corev1.Pod, name string) corev1.ContainerStatus {
		for _, s := range p.Status.ContainerStatuses {
			if s.Name == name {
				return s
			}
		}
		return corev1.ContainerStatus{}
	}
	exited := func(s corev1.ContainerStatus) bool {
		t := s.State.Terminated
		if t == nil {
			t = s.LastTerminationState.Terminated
		}
		return t != nil && t.ExitCode == code
	}
	get := func(ctx context.Context) (*corev1.Pod, error) {
		return cs.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	}
	p, err := get(ctx)
	if err != nil {
		return false, err
	}
	before := status(p, sibling)
	if before.ContainerID == "" {
		return false, fmt.Errorf("pod %s: sibling %s is not running", pod, sibling)
	}
	if before.RestartCount > 0 {
		// The pod is new: its sibling restarted before this first look (a
		// late one, under load), and only the rule restarts it. main shows
		// no exit then: the rule restarted it too, leaving no last state.
		return true, nil
	}
	restarted := func(s corev1.ContainerStatus) bool {
		return s.RestartCount > before.RestartCount || (s.ContainerID != "" && s.ContainerID != before.ContainerID)
	}
	var seen bool
	err = wait.Until(ctx, wait.PodRunning, fmt.Sprintf("container %s of pod %s to exit %d", main, pod, code), func(ctx context.Context) (bool, string, error) {
		p, err := get(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		seen = restarted(status(p, sibling))
		return seen || exited(status(p, main)), fmt.Sprintf("%s: %+v", main, status(p, main).State), nil
	})
	if err != nil || seen {
		return seen, err
	}
	opened := time.Now()
	var unseen error // why a poll of the window is no evidence
	reads := 0       // polls of the window that read the pod
	err = wait.Until(ctx, wait.RuleWindow, fmt.Sprintf("sibling %s of pod %s to be restarted", sibling, pod), func(ctx context.Context) (bool, string, error) {
		p, err := get(ctx)
		if err == nil {
			reads++
		}
		switch {
		case err != nil && (ctx.Err() != nil || windowEnds(err)):
			return false, "the window closed during a read", nil // its end, not a failure to look
		case err != nil:
			unseen = fmt.Errorf("pod %s could not be read during the window: %w", pod, err)
			return false, "", unseen
		}
		s := status(p, sibling)
		if restarted(s) {
			return true, "", nil
		}
		if s.State.Running == nil {
			unseen = fmt.Errorf("pod %s: sibling %s is neither restarted nor running (%+v): no evidence either way", pod, sibling, s.State)
			return false, "", unseen
		}
		return false, fmt.Sprintf("restart count %d, container %s", s.RestartCount, s.ContainerID), nil
	})
	switch {
	case err == nil:
		return true, nil
	case unseen != nil:
		return false, unseen
	case !errors.Is(err, wait.ErrNotDone):
		return false, err
	case reads == 0:
		return false, fmt.Errorf("pod %s was not read once during the window: no evidence either way", pod)
	}
	if err := leaseRenewedSince(ctx, cs, p.Spec.NodeName, opened); err != nil {
		return false, fmt.Errorf("sibling %s of pod %s was not restarted, but that is no evidence: %w", sibling, pod, err)
	}
	return false, nil
}

// windowEnds is the client's rate limiter refusing a read because its
// wait would outlast the window: no read can land before the window ends.
func windowEnds(err error) bool {
	return strings.Contains(err.Error(), "would exceed context deadline")
}

// leaseRenewedSince is nil when node's kubelet renewed its Lease after t:
// it was alive while it left a container alone.
func leaseRenewedSince(ctx context.Context, cs kubernetes.Interface, node string, t time.Time) error {
	l, err := cs.CoordinationV1().Leases("kube-node-lease").Get(ctx, node, metav1.GetOptions{})
	switch {
	case err != nil:
		return fmt.Errorf("the kubelet of node %q: its Lease: %w", node, err)
	case l.Spec.RenewTime == nil || l.Spec.RenewTime.Time.Before(t.Truncate(time.Second)):
		return fmt.Errorf("the kubelet of node %q did not renew its Lease during the window (last %v)", node, l.Spec.RenewTime)
	}
	return nil
}
