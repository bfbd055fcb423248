package probes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
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

// BindDirectly creates the pod with spec.nodeName set (no scheduler) and
// waits (wait-pod-running) until it runs, the kubelet fails it, (a pod
// that reports and exits) it has succeeded, or the kubelet says it cannot
// create its sandbox.
func BindDirectly(ctx context.Context, cs kubernetes.Interface, namespace, node string, pod *corev1.Pod) (Admission, error) {
	pod = pod.DeepCopy()
	pod.Spec.NodeName = node
	pod.Spec.Affinity = nil
	if _, err := CreatePod(ctx, cs, namespace, pod); err != nil {
		return Admission{Pod: pod.Name, Node: node}, fmt.Errorf("create pod %s on %s: %w", pod.Name, node, err)
	}
	res := Admission{Pod: pod.Name, Node: node}
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
