package framework

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// Preemption is what became of a high-priority pod that had to preempt
// to be placed, and of the pods it could have preempted.
type Preemption struct {
	Pod  string `json:"pod"`
	Node string `json:"node,omitempty"` // where it was bound, "" if not
	// Nominated is the node the scheduler nominated for it after preempting.
	Nominated string `json:"nominated,omitempty"`
	// Message is its PodScheduled condition's message where it was refused.
	Message string `json:"message,omitempty"`
	// Victims are the held pods deleted or marked for preemption.
	Victims []string `json:"victims,omitempty"`
	// Seen is fixtures.Preempted or fixtures.NotPreempted.
	Seen string `json:"seen"`
}

// Preempt creates pod (already given a priority class above the held
// pods') and waits (wait-scheduling) until it is bound, or refused with
// no node nominated: the scheduler's last word on preempting for it.
// held are the running pods it could preempt, in namespace.
func Preempt(ctx context.Context, cs kubernetes.Interface, namespace string, pod *corev1.Pod, held []string) (Preemption, error) {
	res := Preemption{Pod: pod.Name}
	if _, err := probes.CreatePod(ctx, cs, namespace, pod); err != nil {
		return res, fmt.Errorf("create pod %s: %w", pod.Name, err)
	}
	err := wait.Until(ctx, wait.Scheduling, "pod "+pod.Name+" bound, or refused with no node nominated", func(ctx context.Context) (bool, string, error) {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		res.Nominated = p.Status.NominatedNodeName
		if p.Spec.NodeName != "" {
			res.Node = p.Spec.NodeName
			return true, "", nil
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				res.Message = c.Message
				return res.Nominated == "", "nominated " + res.Nominated + ", not yet bound", nil
			}
		}
		return false, "pending without a decision", nil
	})
	if err != nil {
		return res, err
	}
	for _, name := range held {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			res.Victims = append(res.Victims, name)
		case err != nil:
			return res, err
		case p.DeletionTimestamp != nil || slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue
		}):
			res.Victims = append(res.Victims, name)
		}
	}
	res.Seen = fixtures.NotPreempted
	if len(res.Victims) > 0 {
		res.Seen = fixtures.Preempted
	}
	return res, nil
}
