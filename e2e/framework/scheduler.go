package framework

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ndfq/ndfq/clusters/surgery"
	"github.com/ndfq/ndfq/internal/wait"
)

// SecondScheduler is a kube-scheduler besides the default one, of the
// control plane's own image, with one profile per name: true keeps the
// NodeDeclaredFeatures plugin, false disables it (a scheduler that
// predates or ignores declarations).
type SecondScheduler = surgery.SchedulerProfiles

// RunSecondScheduler starts it as a pod on the control-plane node, with
// the default scheduler's kubeconfig, and removes it at cleanup.
func (e *Env) RunSecondScheduler(ctx context.Context, profiles SecondScheduler) {
	GinkgoHelper()
	RunScheduler(ctx, e.Clientset, SchedulerInput{Name: "ndfq-second-scheduler", Profiles: profiles})
}

// SchedulerInput is a kube-scheduler to run beside the default one.
type SchedulerInput struct {
	Name     string
	Profiles SecondScheduler
	// FeatureGates is its --feature-gates ("" for the binary's defaults).
	FeatureGates string
	// MetricsPort serves /metrics to anyone (0: no serving port at all,
	// since the default scheduler holds 10259 on the host).
	MetricsPort int
}

// RunScheduler starts a kube-scheduler of the control plane's own image as
// a pod on the control-plane node of the cluster cs talks to, waits until
// it runs, and removes it at cleanup (or when the returned stop is called).
func RunScheduler(ctx context.Context, cs kubernetes.Interface, in SchedulerInput) (stop func(context.Context)) {
	GinkgoHelper()
	const ns = "kube-system"
	name := in.Name
	static, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "component=kube-scheduler"})
	Expect(err).NotTo(HaveOccurred())
	Expect(static.Items).NotTo(BeEmpty(), "the default kube-scheduler static pod")
	def := static.Items[0]
	args := []string{"kube-scheduler", "--config=/etc/ndfq/config.yaml", "--secure-port=0"}
	if in.MetricsPort != 0 {
		args = []string{"kube-scheduler", "--config=/etc/ndfq/config.yaml", fmt.Sprintf("--secure-port=%d", in.MetricsPort),
			"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"}
	}
	if in.FeatureGates != "" {
		args = append(args, "--feature-gates="+in.FeatureGates)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"config.yaml": string(in.Profiles.Config(500))}}
	_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	file := corev1.HostPathFile
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "ndfq"}},
		Spec: corev1.PodSpec{
			NodeName: def.Spec.NodeName, HostNetwork: true, PriorityClassName: def.Spec.PriorityClassName,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name: "kube-scheduler", Image: def.Spec.Containers[0].Image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: args,
				VolumeMounts: []corev1.VolumeMount{
					{Name: "kubeconfig", MountPath: surgery.SchedulerKubeconfig, ReadOnly: true},
					{Name: "config", MountPath: "/etc/ndfq", ReadOnly: true},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "kubeconfig", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: surgery.SchedulerKubeconfig, Type: &file}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
			},
		},
	}
	_, err = cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	stopped := false
	stop = func(ctx context.Context) {
		if stopped {
			return
		}
		stopped = true
		zero := int64(0)
		_ = cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		_ = cs.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
		Expect(wait.Until(ctx, wait.PodRunning, "scheduler "+name+" to be gone", func(ctx context.Context) (bool, string, error) {
			_, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err != nil, "still there", nil
		})).To(Succeed())
	}
	DeferCleanup(func(ctx SpecContext) { stop(ctx) })
	_, err = wait.ForPodRunning(ctx, cs, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return stop
}

// SchedulerMetrics reads /metrics of a scheduler RunScheduler started
// with a MetricsPort, through the apiserver's pod proxy.
func SchedulerMetrics(ctx context.Context, cs kubernetes.Interface, name string, port int) map[string]*dto.MetricFamily {
	GinkgoHelper()
	var raw []byte
	Expect(wait.Until(ctx, wait.Metrics, "/metrics of scheduler "+name, func(ctx context.Context) (bool, string, error) {
		var err error
		raw, err = cs.CoreV1().Pods("kube-system").ProxyGet("https", name, strconv.Itoa(port), "metrics", nil).DoRaw(ctx)
		return err == nil, fmt.Sprint(err), nil
	})).To(Succeed())
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	Expect(err).NotTo(HaveOccurred())
	return families
}
