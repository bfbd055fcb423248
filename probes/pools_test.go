package probes

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/fixtures"
)

func node(name, kubelet string, labels map[string]string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	n.Status.NodeInfo.KubeletVersion = kubelet
	return n
}

// Pools on a provider's fleet: the first well-known label any node has,
// sliced by kubelet version, unlabelled nodes named as such.
func TestPoolsOnProviders(t *testing.T) {
	gke := "cloud.google.com/gke-nodepool"
	nodes := []corev1.Node{
		node("a", "v1.37.2", map[string]string{gke: "default", "karpenter.sh/nodepool": "x"}),
		node("b", "v1.36.3", map[string]string{gke: "default"}),
		node("c", "v1.36.3", map[string]string{gke: "batch"}),
		node("d", "v1.36.3", nil),
	}
	if got := ChoosePoolLabel(nodes, ""); got != (PoolLabelChoice{Label: gke, Source: "well-known"}) {
		t.Errorf("chose %+v", got)
	}
	if got := ChoosePoolLabel(nodes, "team"); got != (PoolLabelChoice{Label: "team", Source: "flag"}) {
		t.Errorf("flag: chose %+v", got)
	}
	if got := ChoosePoolLabel(nodes[3:], ""); got != (PoolLabelChoice{Source: "none"}) {
		t.Errorf("no labels: chose %+v", got)
	}
	want := map[string]string{"a": "default@v1.37.2", "b": "default@v1.36.3", "c": "batch", "d": Unlabelled}
	got, sliced := SlicePools(nodes, gke)
	if !maps.Equal(got, want) || !maps.Equal(sliced, map[string]bool{"default@v1.37.2": true, "default@v1.36.3": true}) {
		t.Errorf("pools %v sliced %v, want %v", got, sliced, want)
	}
	want = map[string]string{"a": Unlabelled + "@v1.37.2", "b": Unlabelled + "@v1.36.3", "c": Unlabelled + "@v1.36.3", "d": Unlabelled + "@v1.36.3"}
	if got, _ := SlicePools(nodes, ""); !maps.Equal(got, want) {
		t.Errorf("no label: pools %v, want %v", got, want)
	}
}

func TestParseToleration(t *testing.T) {
	for in, want := range map[string]corev1.Toleration{
		"*":                     {Operator: corev1.TolerationOpExists},
		"gpu":                   {Key: "gpu", Operator: corev1.TolerationOpExists},
		"gpu:NoSchedule":        {Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		"team=ml:NoExecute":     {Key: "team", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoExecute},
		"team=ml":               {Key: "team", Operator: corev1.TolerationOpEqual, Value: "ml"},
		"dedicated=:NoSchedule": {Key: "dedicated", Operator: corev1.TolerationOpEqual, Effect: corev1.TaintEffectNoSchedule},
		"x:PreferNoSchedule":    {Key: "x", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule},
	} {
		got, err := ParseToleration(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "=x", "gpu:Never", ":NoSchedule"} {
		if _, err := ParseToleration(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Probe pods need no shell and no ndfq image: the image's own entrypoint,
// steered by node name, with the caller's tolerations and scheduler.
func TestProbePodIsPortable(t *testing.T) {
	p := &prober{id: "abcde", image: "registry.k8s.io/pause:3.10.2", in: RunInput{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}}
	for _, sp := range fixtures.FeaturePods("1.37") {
		pod := p.probePod(p.podName("s0", "Pool_With.Odd/Name", 3), steering("", Unlabelled, []string{"n1", "n2"}, false), "second", sp.Apply)
		if pod.Name != "ndfq-abcde-s0-pool-with-odd-name-3" || pod.Labels[RunLabel] != "abcde" || pod.Spec.SchedulerName != "second" {
			t.Errorf("name %s labels %v scheduler %q", pod.Name, pod.Labels, pod.Spec.SchedulerName)
		}
		for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
			if c.Image != p.image || c.Command != nil || c.Args != nil || c.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("%s: container %s runs %s %v %v (%s)", sp.Feature, c.Name, c.Image, c.Command, c.Args, c.ImagePullPolicy)
			}
		}
		terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(terms) != 2 || !slices.Equal(terms[1].MatchFields[0].Values, []string{"n2"}) {
			t.Errorf("steering unlabelled nodes by name, one per term: %+v", terms)
		}
		if len(pod.Spec.Tolerations) != 2 {
			t.Errorf("tolerations %v", pod.Spec.Tolerations)
		}
	}
}

// A labelled pool is one term on its label; a sliced one names its nodes.
func TestSteering(t *testing.T) {
	if got := steering("pool", "a", []string{"n1", "n2"}, false); len(got) != 1 || got[0].MatchExpressions[0].Values[0] != "a" {
		t.Errorf("labelled pool: %+v", got)
	}
	if got := steering("pool", "a@v1.36.3", []string{"n1", "n2"}, true); len(got) != 2 || got[0].MatchFields[0].Values[0] != "n1" {
		t.Errorf("sliced pool: %+v", got)
	}
}
