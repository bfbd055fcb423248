package probes

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/wait"
)

// CreatePod creates the pod. In a namespace made moments before, the
// ServiceAccount admission plugin refuses every pod with a 403 until
// kube-controller-manager has made the default ServiceAccount: no lack of
// permission, so that refusal is retried (wait-api) and, if it lasts,
// reported as what it is.
func CreatePod(ctx context.Context, cs kubernetes.Interface, namespace string, pod *corev1.Pod) (*corev1.Pod, error) {
	var created *corev1.Pod
	var last error
	err := wait.Until(ctx, wait.API, "namespace "+namespace+" to admit pod "+pod.Name, func(ctx context.Context) (bool, string, error) {
		created, last = cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
		if noServiceAccountYet(last) {
			return false, last.Error(), nil
		}
		return true, "", nil
	})
	switch {
	case noServiceAccountYet(last):
		return nil, &NoServiceAccountError{Namespace: namespace, Refusal: last.Error()}
	case last != nil:
		return nil, last
	case err != nil:
		return nil, err
	}
	return created, nil
}

// NoServiceAccountError is a namespace whose default ServiceAccount did
// not appear in time. It keeps the 403's words, not the 403 itself: it
// must not read as a missing permission.
type NoServiceAccountError struct{ Namespace, Refusal string }

func (e *NoServiceAccountError) Error() string {
	return fmt.Sprintf("namespace %s has no ServiceAccount default, which kube-controller-manager makes (is it running?): %s", e.Namespace, e.Refusal)
}

// noServiceAccountYet is the ServiceAccount admission plugin's refusal
// (plugin/pkg/admission/serviceaccount: "error looking up service account").
func noServiceAccountYet(err error) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "error looking up service account")
}

// probePod is fixtures' pod shaped for any cluster: steered to the pool's
// nodes, running the probe image's own entrypoint (a pause image: no
// shell), tolerating what the caller says.
func (p *prober) probePod(name string, steer []corev1.NodeSelectorTerm, schedulerName string, shape func(*corev1.Pod)) *corev1.Pod {
	pod := fixtures.BasePod(name, "", "")
	shape(pod)
	pod.Labels[RunLabel], pod.Labels[ManagedByLabel] = p.id, ManagedBy
	pod.Spec.SchedulerName = schedulerName
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: steer},
	}}
	pod.Spec.Tolerations = append(pod.Spec.Tolerations, p.in.Tolerations...)
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			cs[i].Image, cs[i].ImagePullPolicy = p.image, corev1.PullIfNotPresent
			cs[i].Command, cs[i].Args = nil, nil
		}
	}
	return pod
}

// RunLabel marks everything one probe run creates (its namespace, its
// pods) with the run's id: what `ndfq probe cleanup` finds.
const RunLabel = "ndfq.io/probe-run"

// ManagedByLabel (the recommended label) says ndfq made an object.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "ndfq"
)

// steering selects a pool's nodes: its label value when the pool is
// exactly that (the common case, one term however large the pool),
// otherwise each node by name (a node field selector takes one name per
// term; terms are ORed).
func steering(label, pool string, nodes []string, byName bool) []corev1.NodeSelectorTerm {
	if label != "" && pool != Unlabelled && !byName {
		return []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: label, Operator: corev1.NodeSelectorOpIn, Values: []string{pool}}}}}
	}
	out := make([]corev1.NodeSelectorTerm, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n}}}})
	}
	return out
}

var unsafePodChars = regexp.MustCompile(`[^a-z0-9-]+`)

// podName is a valid pod name, unique per run, for a pool's i-th probe:
// "ndfq-RUN-KIND-POOL-I", so runs can share a namespace.
func (p *prober) podName(kind, pool string, i int) string {
	name := strings.Trim(unsafePodChars.ReplaceAllString(strings.ToLower(pool), "-"), "-")
	if len(name) > 30 {
		name = strings.Trim(name[:30], "-")
	}
	return fmt.Sprintf("ndfq-%s-%s-%s-%d", p.id, kind, name, i)
}

// ParseToleration reads kubectl's taint syntax as what tolerates it:
// KEY[=VALUE][:EFFECT], or "*" for every taint.
func ParseToleration(s string) (corev1.Toleration, error) {
	if s == "*" {
		return corev1.Toleration{Operator: corev1.TolerationOpExists}, nil
	}
	kv, effect, hasEffect := strings.Cut(s, ":")
	key, value, hasValue := strings.Cut(kv, "=")
	t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists}
	if hasValue {
		t.Operator, t.Value = corev1.TolerationOpEqual, value
	}
	if hasEffect {
		switch e := corev1.TaintEffect(effect); e {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
			t.Effect = e
		default:
			return t, fmt.Errorf("toleration %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", s, effect)
		}
	}
	if key == "" {
		return t, fmt.Errorf("toleration %q: want KEY[=VALUE][:EFFECT] or *", s)
	}
	return t, nil
}
