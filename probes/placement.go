package probes

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/internal/wait"
)

// Placement is what the scheduler decided for one probe pod.
type Placement struct {
	Pod           string
	Node          string // bound node, "" when not bound
	Unschedulable bool
	Message       string // the PodScheduled condition's message when refused
	Decision      time.Duration
	// Created is the client's clock when the create was sent: with when a
	// watch saw the decision it times it below the conditions' one second.
	Created time.Time
}

// Place creates the pod and waits (wait-scheduling) until it is bound or
// the scheduler marks it Unschedulable. The decision time is the server's:
// from the pod's creation to its PodScheduled condition, both stamped by the
// control plane (1 s resolution), so a client that polls slowly (throttled,
// or beside many other probes) does not stretch it.
func Place(ctx context.Context, cs kubernetes.Interface, namespace string, pod *corev1.Pod) (Placement, error) {
	start := time.Now()
	created, err := CreatePod(ctx, cs, namespace, pod)
	if err != nil {
		return Placement{Pod: pod.Name}, fmt.Errorf("create probe pod %s: %w", pod.Name, err)
	}
	return pollPlacement(ctx, cs, namespace, created.Name, start)
}

// pollPlacement waits (wait-scheduling) for the scheduler's decision on a
// pod whose create was sent at start, reading the pod each interval.
func pollPlacement(ctx context.Context, cs kubernetes.Interface, namespace, pod string, start time.Time) (Placement, error) {
	res := Placement{Pod: pod, Created: start}
	err := wait.Until(ctx, wait.Scheduling, "a scheduling decision for pod "+pod, func(ctx context.Context) (bool, string, error) {
		p, err := cs.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if res.decidedBy(p, start) {
			return true, "", nil
		}
		return false, "pending without a decision", nil
	})
	return res, err
}

// decidedBy fills the placement from the pod where the scheduler has
// decided: bound (its node) or refused as Unschedulable (its message),
// timed by the server's whole-second stamps; false while it has not.
func (res *Placement) decidedBy(p *corev1.Pod, start time.Time) bool {
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodScheduled {
			continue
		}
		switch {
		case c.Status == corev1.ConditionTrue && p.Spec.NodeName != "":
			res.Node = p.Spec.NodeName
		case c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable:
			res.Unschedulable, res.Message = true, c.Message
		default:
			continue
		}
		res.Decision = max(c.LastTransitionTime.Sub(p.CreationTimestamp.Time), 0)
		return true
	}
	if p.Spec.NodeName != "" { // bound without the condition: the client's own clock
		res.Node, res.Decision = p.Spec.NodeName, time.Since(start)
		return true
	}
	return false
}

// Admission is what a kubelet did with a pod bound to it directly.
type Admission struct {
	Pod     string
	Node    string
	Phase   corev1.PodPhase
	Reason  string
	Message string
	// SandboxRefused is the kubelet's FailedCreatePodSandBox message for a
	// pod it admitted but could not start; "" otherwise.
	SandboxRefused string
}

// Rejected is true when the kubelet refused the pod.
func (a Admission) Rejected() bool { return a.Phase == corev1.PodFailed }

// UpdateResult is the apiserver's answer to one pod update.
type UpdateResult struct {
	Pod     string
	Node    string
	Code    int32 // HTTP status, 200 when admitted
	Message string
	// Dropped is a field the write carried that the admitted object lacks:
	// the apiserver dropped it (its gate off), so admission judged nothing.
	Dropped string
}

// Admitted is true for a 2xx answer.
func (u UpdateResult) Admitted() bool { return u.Code >= 200 && u.Code < 300 }

// Answer is the answer in a cell's words: the code, or "201 with X
// dropped" where the field that needs the feature did not survive.
func (u UpdateResult) Answer() string {
	if u.Dropped != "" {
		return fmt.Sprintf("%d with %s dropped", u.Code, u.Dropped)
	}
	return fmt.Sprint(u.Code)
}

// Update sends a strategic merge patch to the pod (or its subresource) and
// keeps the HTTP status and message instead of failing on a refusal.
func Update(ctx context.Context, cs kubernetes.Interface, namespace, pod, subresource string, patch []byte) (UpdateResult, error) {
	return update(ctx, cs, namespace, pod, subresource, patch, metav1.PatchOptions{})
}

// DryRunUpdate is Update as a server-side dry run: admission answers as
// for the real update, and nothing is stored, so every apiserver of a
// control plane can be asked the same question.
func DryRunUpdate(ctx context.Context, cs kubernetes.Interface, namespace, pod, subresource string, patch []byte) (UpdateResult, error) {
	return update(ctx, cs, namespace, pod, subresource, patch, metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
}

func update(ctx context.Context, cs kubernetes.Interface, namespace, pod, subresource string, patch []byte, opts metav1.PatchOptions) (UpdateResult, error) {
	res := UpdateResult{Pod: pod}
	var subs []string
	if subresource != "" {
		subs = []string{subresource}
	}
	p, err := cs.CoreV1().Pods(namespace).Patch(ctx, pod, types.StrategicMergePatchType, patch, opts, subs...)
	if err == nil {
		res.Code, res.Node = 200, p.Spec.NodeName
		return res, nil
	}
	if answered(err, &res) {
		return res, nil
	}
	return res, fmt.Errorf("patch pod %s: %w", pod, err)
}

// answered fills res with the apiserver's refusal, where err is one (a
// status with a code), and says whether it was.
func answered(err error, res *UpdateResult) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	res.Code, res.Message = status.Status().Code, status.Status().Message
	return true
}
