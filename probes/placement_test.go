package probes

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ndfq/ndfq/fixtures"
)

// A decision is timed by the control plane's stamps (creation to the
// PodScheduled condition), not by when a slow or throttled poll saw it.
func TestPlaceTimesTheDecisionByTheServersStamps(t *testing.T) {
	created := metav1.NewTime(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
	for _, c := range []struct {
		name string
		cond corev1.PodCondition
		node string
	}{
		{"bound", corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, "n1"},
		{"refused", corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "no"}, ""},
	} {
		cs := fake.NewClientset(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "ns"}})
		cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			cond := c.cond
			cond.LastTransitionTime = metav1.NewTime(created.Add(3 * time.Second))
			return true, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", CreationTimestamp: created},
				Spec: corev1.PodSpec{NodeName: c.node}, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{cond}}}, nil
		})
		res, err := Place(context.Background(), cs, "ns", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}})
		if err != nil || res.Decision != 3*time.Second || res.Node != c.node || res.Unschedulable != (c.node == "") {
			t.Errorf("%s: %+v, %v; want decided in 3s", c.name, res, err)
		}
	}
}

// Decisions are timed from sending the create to a watch seeing the
// decision: a control pod decided in 40 ms is not 0 s (issue 27). A watch
// that saw it later than the server's whole-second stamps allow is held
// to them; a pod it never saw keeps the stamps.
func TestDecisionsTimedByTheWatch(t *testing.T) {
	sent := time.Date(2026, 12, 5, 15, 0, 0, 500_000_000, time.UTC)
	d := &decisions{stop: func() {}, seen: map[string]time.Time{
		"ctl":   sent.Add(40 * time.Millisecond),
		"probe": sent.Add(1500 * time.Millisecond),
		"late":  sent.Add(9 * time.Second), // a loaded machine's watch, 2 s stamped
	}}
	placements := []PoolProbe{
		{pod: "ctl", created: sent, Decision: 0, DecisionFrom: DecisionFromCondition},
		{pod: "probe", created: sent, Decision: 2 * time.Second, DecisionFrom: DecisionFromCondition},
		{pod: "late", created: sent, Decision: 2 * time.Second, DecisionFrom: DecisionFromCondition},
		{pod: "unseen", created: sent, Decision: time.Second, DecisionFrom: DecisionFromCondition},
	}
	d.time(placements)
	for i, want := range []struct {
		d    time.Duration
		from string
	}{{40 * time.Millisecond, decisionFromWatch}, {1500 * time.Millisecond, decisionFromWatch}, {3 * time.Second, decisionFromWatch}, {time.Second, DecisionFromCondition}} {
		if placements[i].Decision != want.d || placements[i].DecisionFrom != want.from {
			t.Errorf("%s: %s by %s, want %s by %s", placements[i].pod, placements[i].Decision, placements[i].DecisionFrom, want.d, want.from)
		}
	}
}

// What no probe pod asks for is named: a probe whose apiserver gate is off
// (updates need NodeDeclaredFeatures too), and a feature without a probe.
func TestNotProbed(t *testing.T) {
	on := func(gates ...string) Gates {
		g := Gates{}
		for _, n := range gates {
			g[n] = GateState{Enabled: true}
		}
		return g
	}
	p := &prober{minor: "1.38", api: on(fixtures.NodeDeclaredFeatures, fixtures.RestartAllContainersOnContainerExits, fixtures.UserNamespacesHostNetworkSupport,
		fixtures.PodCertificateMLDSA, fixtures.InPlacePodLevelResourcesVerticalScaling, fixtures.InPlacePodVerticalScalingInitContainers, fixtures.InPlacePodVerticalScalingMemoryBackedVolumes,
		fixtures.SecurityProfileOCI, fixtures.TranslateStreamCloseWebsocketRequests, fixtures.DRANodeAllocatableResources, fixtures.DRAOptionalNodeOperations)}
	got := fmt.Sprint(p.notProbed())
	want := "[{SecurityProfileOCI scheduling  false ndfq has no scheduling probe for it (a seccompProfile of type OCI on the pod or a container)} {VolumeBindMountOptions scheduling VolumeBindMountOptions false kube-apiserver has VolumeBindMountOptions unknown to this component}]"
	if got != want {
		t.Errorf("1.38, VolumeBindMountOptions off:\n got %s\nwant %s", got, want)
	}
	// A feature without a probe whose field the apiserver refuses: no pod
	// could ask for it, which is said with the gate, not left unchecked.
	delete(p.api, fixtures.SecurityProfileOCI)
	if got := fmt.Sprint(p.notProbed()[0]); got != "{SecurityProfileOCI scheduling SecurityProfileOCI false kube-apiserver has SecurityProfileOCI unknown to this component}" {
		t.Errorf("1.38, SecurityProfileOCI off: %s", got)
	}
	p.api[fixtures.SecurityProfileOCI] = GateState{Enabled: true}
	p.api[fixtures.NodeDeclaredFeatures] = GateState{}
	for _, n := range p.notProbed() {
		if n.At == "update" && n.GateOff != fixtures.NodeDeclaredFeatures {
			t.Errorf("NodeDeclaredFeatures off: %+v", n)
		}
	}
	if n := len(p.notProbed()); n != 2+3+1 {
		t.Errorf("NodeDeclaredFeatures off: %d not probed, want the 2 above, the 3 update probes of 1.38 and the ResourceSlice's: %v", n, p.notProbed())
	}
	// The features no pod field asks for are named where their path is off.
	p.api = on(fixtures.NodeDeclaredFeatures)
	var paths []string
	for _, n := range p.notProbed() {
		if n.At == "streaming" || n.Feature == fixtures.DRANodeAllocatableResources || n.Feature == fixtures.DRAOptionalNodeOperations {
			paths = append(paths, n.Feature+"/"+n.GateOff)
		}
	}
	if want := "[DRAOptionalNodeOperations/DRAOptionalNodeOperations ExtendWebSocketsToKubelet/TranslateStreamCloseWebsocketRequests DRANodeAllocatableResources/DRANodeAllocatableResources]"; fmt.Sprint(paths) != want {
		t.Errorf("path features with their gates off: %v, want %s", paths, want)
	}
}

// Waits read the run's watch: a decision and a start are seen from its
// events, with no polling, and a pod that fails is said at once.
func TestWaitsReadTheWatch(t *testing.T) {
	cs := fake.NewClientset()
	gets := 0
	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { gets++; return false, nil, nil })
	p := &prober{cs: cs, ns: "ns", id: "abcde"}
	watched, err := p.watchDecisions(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer watched.stop()
	p.watched = watched
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ndfq-abcde-p-a-0", Namespace: "ns", Labels: map[string]string{RunLabel: "abcde"}}}
	go func() {
		time.Sleep(50 * time.Millisecond)
		bound := pod.DeepCopy()
		bound.Spec.NodeName = "a1"
		bound.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
		_, _ = cs.CoreV1().Pods("ns").Update(context.Background(), bound, metav1.UpdateOptions{})
		running := bound.DeepCopy()
		running.Status.Phase = corev1.PodRunning
		running.Status.Conditions = append(running.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
		_, _ = cs.CoreV1().Pods("ns").UpdateStatus(context.Background(), running, metav1.UpdateOptions{})
	}()
	res, err := p.place(context.Background(), pod)
	if err != nil || res.Node != "a1" {
		t.Fatalf("placement %+v %v", res, err)
	}
	got, err := p.started(context.Background(), pod.Name, nil)
	if err != nil || got.Status.Phase != corev1.PodRunning || gets != 0 {
		t.Errorf("started: %v %v, %d gets (want none: the watch)", got, err, gets)
	}
	failed := pod.DeepCopy()
	failed.Name, failed.Status.Phase, failed.Status.Reason = "ndfq-abcde-u-a-0", corev1.PodFailed, "PodFeatureUnsupported"
	if _, err := cs.CoreV1().Pods("ns").Create(context.Background(), failed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.started(context.Background(), failed.Name, nil); err == nil || !strings.Contains(err.Error(), "PodFeatureUnsupported") {
		t.Errorf("a failed pod: %v", err)
	}
}
