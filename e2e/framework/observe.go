package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/ndfq/ndfq/claims"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
	"github.com/ndfq/ndfq/probes"
)

// The observations of a pass: each returns what it saw, or why it could
// not see it in Err, and leaves asserting to the cell's spec.

// ObservePlacement is the scheduler's decision for a pod shaped by shape
// (nil: a control pod) steered to pool.
func ObservePlacement(pool topology.Pool, shape func(*corev1.Pod)) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, _ *rest.Config, ns, name string) Observation {
		res, err := probes.Place(ctx, cs, ns, PoolPod(name, pool, shape))
		return Observation{Node: res.Node, Placement: &res, Err: errText(err)}
	}
}

// ObserveControlUpdate is the answer to a control update of a running pod on pool.
func ObserveControlUpdate(pool topology.Pool, ctl fixtures.ControlUpdate) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, _ *rest.Config, ns, name string) Observation {
		pod, res, err := startedAndUpdated(ctx, cs, ns, name, pool, ctl.Apply, nil, ctl.Subresource, ctl.Patch)
		o := Observation{Node: res.Node, Update: &res, Err: errText(err)}
		if err == nil && res.Admitted() && ctl.Invalid != nil {
			// An apiserver that drops the change admits it: say whether the spec moved.
			after, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				o.Err = errText(err)
				return o
			}
			o.SpecChanged = ptr.To(after.Generation != pod.Generation)
		}
		return o
	}
}

// ObserveFeatureUpdate is the answer to an update that needs probe's
// feature of a pod on pool and, where it was admitted, what the kubelet
// then did with it: applied it, or called it infeasible.
func ObserveFeatureUpdate(pool topology.Pool, probe fixtures.FeatureUpdate) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, _ *rest.Config, ns, name string) Observation {
		pod, res, err := startedAndUpdated(ctx, cs, ns, name, pool, probe.Apply, probe.Started, probe.Subresource, probe.Patch)
		o := Observation{Node: res.Node, Update: &res, Err: errText(err)}
		if err != nil || !res.Admitted() || probe.Applied == nil {
			return o
		}
		err = wait.Until(ctx, wait.PodRunning, "pod "+pod.Name+" to apply the resize or call it infeasible", func(ctx context.Context) (bool, string, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			switch msg := fixtures.ResizeInfeasible(p); {
			case probe.Applied(p):
				o.Resize = ResizeApplied
			case msg != "":
				o.Resize = msg
			default:
				return false, fmt.Sprintf("generation %d observed %d, conditions %v", p.Generation, p.Status.ObservedGeneration, p.Status.Conditions), nil
			}
			return true, "", nil
		})
		o.Err = errText(err)
		return o
	}
}

// ObserveUpdateWithoutNode is the answer to an update that needs probe's
// feature of a pod that has no node to judge it by: bound by spec.nodeName
// to node, which does not exist, or (node "") bound to none, left to a
// scheduler that does not run. The update comes at once: the pod garbage
// collector deletes a pod bound to a missing node after its quarantine.
func ObserveUpdateWithoutNode(probe fixtures.FeatureUpdate, node string) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, _ *rest.Config, ns, name string) Observation {
		pod := fixtures.BasePod(name, topology.PoolLabel, "ndfq-no-such-pool")
		probe.Apply(pod)
		pod.Spec.NodeName = node
		if node == "" {
			pod.Spec.SchedulerName = "ndfq-no-such-scheduler"
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return Observation{Err: fmt.Sprintf("create pod %s: %v", name, err)}
		}
		res, err := probes.Update(ctx, cs, ns, name, probe.Subresource, probe.Patch)
		res.Node = node
		o := Observation{Node: node, Update: &res, Err: errText(err)}
		if node != "" {
			// No kubelet will confirm its deletion: it goes at once, or its
			// namespace waits for the pod garbage collector.
			if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && o.Err == "" {
				o.Err = fmt.Sprintf("delete pod %s, bound to %s: %v", name, node, err)
			}
		}
		return o
	}
}

// startedAndUpdated places a shaped pod on pool, waits until started says
// it is ready for the update (nil: Running and Ready) and sends the patch.
func startedAndUpdated(ctx context.Context, cs kubernetes.Interface, ns, name string, pool topology.Pool, shape func(*corev1.Pod), started func(*corev1.Pod) bool, subresource string, patch []byte) (*corev1.Pod, probes.UpdateResult, error) {
	pod, node, err := startedOn(ctx, cs, ns, name, pool, shape, started)
	if err != nil {
		return nil, probes.UpdateResult{Pod: name, Node: node}, err
	}
	res, err := probes.Update(ctx, cs, ns, name, subresource, patch)
	res.Node = node
	return pod, res, err
}

// startedOn places a shaped pod on pool and waits until started says it
// is (nil: Running and Ready); node is where it was bound, "" if nowhere.
func startedOn(ctx context.Context, cs kubernetes.Interface, ns, name string, pool topology.Pool, shape func(*corev1.Pod), started func(*corev1.Pod) bool) (pod *corev1.Pod, node string, err error) {
	placed, err := probes.Place(ctx, cs, ns, PoolPod(name, pool, shape))
	if err != nil {
		return nil, "", err
	}
	if placed.Node == "" {
		return nil, "", fmt.Errorf("pod %s not bound on %s: %s", name, pool.Name, placed.Message)
	}
	pod, err = wait.ForPodStarted(ctx, cs, ns, name, started)
	return pod, placed.Node, err
}

// ObserveKubelet binds a pod that needs probe's feature, shaped by its
// exercise, to the pool's first node past the scheduler, and says what its
// kubelet did: PodFeatureUnsupported, its sandbox refused, or the feature
// honoured or ignored (as the pod reports it, or, for a rule, whether the
// sibling restarted when main exited).
func ObserveKubelet(pool topology.Pool, probe fixtures.FeaturePod) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, _ *rest.Config, ns, name string) Observation {
		node, err := firstNodeOf(ctx, cs, pool)
		if err != nil {
			return Observation{Err: err.Error()}
		}
		seen, res, err := kubeletOutcome(ctx, cs, ns, node, PoolPod(name, pool, probe.Apply), probe)
		return Observation{Node: node, Kubelet: &KubeletResult{Seen: seen, Admission: res}, Err: errText(err)}
	}
}

func kubeletOutcome(ctx context.Context, cs kubernetes.Interface, ns, node string, pod *corev1.Pod, probe fixtures.FeaturePod) (string, probes.Admission, error) {
	if probe.Exercise != nil {
		probe.Exercise(pod)
	}
	res, err := BindDirectly(ctx, cs, ns, node, pod)
	switch {
	case err != nil:
		return "", res, err
	case res.Rejected() || probe.Exercise == nil:
		return res.Reason, res, nil
	case res.SandboxRefused != "":
		return claims.SandboxRefused, res, nil
	case probe.SelfReports:
		// BindDirectly may return while the check still runs (Running and
		// Ready): its answer is the phase it ends in.
		var p *corev1.Pod
		err := wait.Until(ctx, wait.PodRunning, "pod "+pod.Name+" to end its exercise", func(ctx context.Context) (bool, string, error) {
			var err error
			if p, err = cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil {
				return false, err.Error(), nil
			}
			return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed, string(p.Status.Phase), nil
		})
		if err != nil {
			return "", res, err
		}
		res.Phase = p.Status.Phase
		if res.Phase != corev1.PodSucceeded {
			return "", res, fmt.Errorf("the exercise of %s on %s ended %s", probe.Feature, node, res.Phase)
		}
		s := fixtures.ContainerStatus(p.Status.ContainerStatuses, p.Spec.Containers[0].Name)
		if s == nil || s.State.Terminated == nil {
			return "", res, fmt.Errorf("pod %s ended without its container's termination message: %+v", pod.Name, p.Status.ContainerStatuses)
		}
		return strings.TrimSpace(s.State.Terminated.Message), res, nil
	}
	restarted, err := ExerciseRule(ctx, cs, ns, pod.Name, fixtures.ExercisedContainer, fixtures.SiblingContainer, fixtures.RuleExitCode)
	if err != nil {
		return "", res, err
	}
	if restarted {
		return claims.Honoured, res, nil
	}
	return claims.Ignored, res, nil
}

// firstNodeOf is the pool's first node by name, as PoolNode picks it.
func firstNodeOf(ctx context.Context, cs kubernetes.Interface, pool topology.Pool) (string, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: topology.PoolLabel + "=" + pool.Name})
	if err != nil {
		return "", err
	}
	var names []string
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	if len(names) == 0 {
		return "", fmt.Errorf("no node of pool %s", pool.Name)
	}
	return slices.Min(names), nil
}

// cellEvidence writes the cell's pod and its events, as they are now, to
// ARTIFACTS/cells/<cell>.yaml and returns the path ("" where it could not).
func cellEvidence(ctx context.Context, cs kubernetes.Interface, artifacts, key, ns, pod string) string {
	dir := filepath.Join(artifacts, "cells")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	type evidence struct {
		Pod    *corev1.Pod    `json:"pod,omitempty"`
		Events []corev1.Event `json:"events,omitempty"`
		Errors []string       `json:"errors,omitempty"`
	}
	var v evidence
	if p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{}); err == nil {
		p.ManagedFields = nil
		v.Pod = p
	} else {
		v.Errors = append(v.Errors, err.Error())
	}
	if l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod).String()}); err == nil {
		v.Events = l.Items
	} else {
		v.Errors = append(v.Errors, err.Error())
	}
	path := filepath.Join(dir, unsafeChars.ReplaceAllString(key, "_")+".yaml")
	if writeYAML(path, v) != nil {
		return ""
	}
	return path
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// streamMu keeps one pod's streams alone in the apiservers' route counts
// while they are read before and after: nothing else in the suite execs,
// attaches or forwards a port, so the counts that grow are that pod's.
var streamMu sync.Mutex

// ObserveStreaming is what exec, attach, port-forward and logs of a
// fixtures.StreamingPod on pool showed and, where routes says the control
// plane counts them, how the apiservers routed each stream.
func ObserveStreaming(pool topology.Pool, routes bool) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config, ns, name string) Observation {
		_, node, err := startedOn(ctx, cs, ns, name, pool, fixtures.StreamingPod, nil)
		o := Observation{Node: node}
		if err != nil {
			o.Err = err.Error()
			return o
		}
		streamMu.Lock()
		defer streamMu.Unlock()
		var before, after map[string]float64
		if routes {
			if before, err = StreamRouteCounts(ctx, cfg, cs); err != nil {
				o.Err = "route counts before the streams: " + err.Error()
				return o
			}
		}
		for _, op := range fixtures.StreamOps {
			o.Streams = append(o.Streams, Stream(ctx, cfg, cs, ns, name, op))
		}
		if routes {
			if after, err = StreamRouteCounts(ctx, cfg, cs); err != nil {
				o.Err = "route counts after the streams: " + err.Error()
				return o
			}
			for i, s := range o.Streams {
				if s.Op.Routed() {
					o.Streams[i].Route = probes.RouteBetween(before, after, s.Op)
				}
			}
		}
		return o
	}
}

// ObservePreemption holds every node of pool with a default-priority pod
// on port, then places a pod of a higher priority that needs probe's
// feature and the same port: what the scheduler preempted for it. The
// priority class is the observation's own, deleted when it ends.
func ObservePreemption(pool topology.Pool, probe fixtures.FeaturePod, port int32) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, _ *rest.Config, ns, name string) Observation {
		var held []string
		for i := range pool.Count {
			h := fmt.Sprintf("%s-held-%d", name, i)
			if _, _, err := startedOn(ctx, cs, ns, h, pool, fixtures.HoldPort(port), nil); err != nil {
				return Observation{Err: fmt.Sprintf("holding port %d: %v", port, err)}
			}
			held = append(held, h)
		}
		class := fixtures.PreemptorClass(ns + "-" + name)
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
			return Observation{Err: fmt.Sprintf("create PriorityClass %s: %v", class.Name, err)}
		}
		defer func() {
			_ = cs.SchedulingV1().PriorityClasses().Delete(context.WithoutCancel(ctx), class.Name, metav1.DeleteOptions{})
		}()
		pod := PoolPod(name, pool, func(p *corev1.Pod) {
			probe.Apply(p)
			fixtures.HoldPort(port)(p)
			p.Spec.PriorityClassName = class.Name
		})
		// The Priority admission plugin reads classes from its informer: a
		// new class is unknown to it for a moment.
		err := wait.Until(ctx, wait.API, "PriorityClass "+class.Name+" known to admission", func(ctx context.Context) (bool, string, error) {
			_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "no PriorityClass with name") {
				return false, err.Error(), nil
			}
			return true, "", err
		})
		if err != nil {
			return Observation{Err: err.Error()}
		}
		res, err := Preempt(ctx, cs, ns, pod, held)
		return Observation{Node: res.Node, Preemption: &res, Err: errText(err)}
	}
}

// ObserveEphemeral adds, through the ephemeralcontainers subresource, an
// ephemeral container that mounts a volume with bindMountOptions to a pod
// running on pool: the apiserver's answer and, where admitted, what the
// kubelet did with the option (its termination message).
func ObserveEphemeral(pool topology.Pool) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, _ *rest.Config, ns, name string) Observation {
		_, res, err := startedAndUpdated(ctx, cs, ns, name, pool, fixtures.EphemeralNoexecVolume, nil, "ephemeralcontainers", fixtures.EphemeralNoexecPatch())
		o := Observation{Node: res.Node, Update: &res, Err: errText(err)}
		if err != nil || !res.Admitted() {
			return o
		}
		// An admitted update is the validator's skip only if the field survived.
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			o.Err = err.Error()
			return o
		}
		if !fixtures.EphemeralKeptOptions(p) {
			res.Dropped = "bindMountOptions"
			return o
		}
		err = wait.Until(ctx, wait.PodRunning, "ephemeral container of pod "+name+" to report its mount", func(ctx context.Context) (bool, string, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			s := fixtures.ContainerStatus(p.Status.EphemeralContainerStatuses, fixtures.EphemeralContainer)
			if s == nil || s.State.Terminated == nil {
				return false, fmt.Sprintf("status %+v", s), nil
			}
			o.Kubelet = &KubeletResult{Seen: strings.TrimSpace(s.State.Terminated.Message)}
			return true, "", nil
		})
		o.Err = errText(err)
		return o
	}
}

// ObserveNodeOperations places a pod on pool whose ResourceClaim can only
// get a device that skips every node operation: the scheduler's decision
// and, where it was bound, whether its kubelet ran it (no driver runs).
// First, the same claim against a slice without the skip (the control)
// must bind on the pool: that slice is created after the other, and one
// informer delivers slices in order, so a bound control also shows the
// scheduler held the slice that skips. The observation's DeviceClasses
// and ResourceSlices are its own, deleted when it ends; the claims go with
// the namespace.
func ObserveNodeOperations(pool topology.Pool) ObserveFunc {
	return func(ctx context.Context, cs kubernetes.Interface, _ *rest.Config, ns, name string) Observation {
		objs := fixtures.NodeOperationsFor(ns + "-" + name)
		ctl := fixtures.NodeOperationsControlFor(ns + "-" + name + "-ctl")
		for _, o := range []fixtures.NodeOperationsObjects{objs, ctl} {
			if err := createNodeOperations(ctx, cs, ns, o); err != nil {
				return Observation{Err: err.Error()}
			}
			defer deleteNodeOperations(context.WithoutCancel(ctx), cs, o)
		}
		control, err := probes.Place(ctx, cs, ns, PoolPod(name+"-ctl", pool, fixtures.UseClaim(ctl.Claim.Name)))
		if err != nil || control.Node == "" {
			return Observation{Control: &control, Err: fmt.Sprintf("the control (the same claim, a slice without the skip) was not bound on %s: %v %s", pool.Name, err, control.Message)}
		}
		res, err := probes.Place(ctx, cs, ns, PoolPod(name, pool, fixtures.UseClaim(objs.Claim.Name)))
		o := Observation{Node: res.Node, Placement: &res, Control: &control, Err: errText(err)}
		if err != nil || res.Node == "" {
			return o
		}
		// Bound: its kubelet must run it with no driver, every operation skipped.
		o.Kubelet = &KubeletResult{Seen: claims.Honoured}
		if _, err := wait.ForPodStarted(ctx, cs, ns, name, nil); err != nil {
			o.Kubelet.Seen = "not started: " + err.Error()
		}
		return o
	}
}

// createNodeOperations creates an observation's class, slice and claim,
// and refuses a slice stored without the skip it was sent with (an
// apiserver with the gate off drops it: the claim would ask nothing).
func createNodeOperations(ctx context.Context, cs kubernetes.Interface, ns string, o fixtures.NodeOperationsObjects) error {
	rs := cs.ResourceV1()
	if _, err := rs.DeviceClasses().Create(ctx, o.Class, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create DeviceClass %s: %w", o.Class.Name, err)
	}
	slice, err := rs.ResourceSlices().Create(ctx, o.Slice, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create ResourceSlice %s: %w", o.Slice.Name, err)
	}
	if !slices.Equal(slice.Spec.SkipNodeOperations, o.Slice.Spec.SkipNodeOperations) {
		return fmt.Errorf("ResourceSlice %s was stored with skipNodeOperations %v, not %v", slice.Name, slice.Spec.SkipNodeOperations, o.Slice.Spec.SkipNodeOperations)
	}
	if _, err := rs.ResourceClaims(ns).Create(ctx, o.Claim, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ResourceClaim %s: %w", o.Claim.Name, err)
	}
	return nil
}

func deleteNodeOperations(ctx context.Context, cs kubernetes.Interface, o fixtures.NodeOperationsObjects) {
	_ = cs.ResourceV1().ResourceSlices().Delete(ctx, o.Slice.Name, metav1.DeleteOptions{})
	_ = cs.ResourceV1().DeviceClasses().Delete(ctx, o.Class.Name, metav1.DeleteOptions{})
}
