package framework

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/internal/wait"
)

// SecondScheduler is a kube-scheduler besides the default one, of the
// control plane's own image, with one profile per name: true keeps the
// NodeDeclaredFeatures plugin, false disables it (a scheduler that
// predates or ignores declarations).
type SecondScheduler map[string]bool

// RunSecondScheduler starts it as a pod on the control-plane node, with
// the default scheduler's kubeconfig, and removes it at cleanup.
func (e *Env) RunSecondScheduler(ctx context.Context, profiles SecondScheduler) {
	GinkgoHelper()
	const ns, name = "kube-system", "ndfq-second-scheduler"
	static, err := e.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "component=kube-scheduler"})
	Expect(err).NotTo(HaveOccurred())
	Expect(static.Items).NotTo(BeEmpty(), "the default kube-scheduler static pod")
	def := static.Items[0]
	config := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" +
		"clientConnection: {kubeconfig: /etc/kubernetes/scheduler.conf}\nleaderElection: {leaderElect: false}\nprofiles:\n"
	for profile, plugin := range profiles {
		config += fmt.Sprintf("- schedulerName: %s\n", profile)
		if !plugin {
			config += "  plugins: {multiPoint: {disabled: [{name: NodeDeclaredFeatures}]}}\n"
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"config.yaml": config}}
	_, err = e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	file := corev1.HostPathFile
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app.kubernetes.io/managed-by": "ndfq"}},
		Spec: corev1.PodSpec{
			NodeName: def.Spec.NodeName, HostNetwork: true, PriorityClassName: def.Spec.PriorityClassName,
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name: "kube-scheduler", Image: def.Spec.Containers[0].Image, ImagePullPolicy: corev1.PullIfNotPresent,
				// No serving port: the default scheduler holds 10259 on this host.
				Command: []string{"kube-scheduler", "--config=/etc/ndfq/config.yaml", "--secure-port=0"},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "kubeconfig", MountPath: "/etc/kubernetes/scheduler.conf", ReadOnly: true},
					{Name: "config", MountPath: "/etc/ndfq", ReadOnly: true},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "kubeconfig", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/etc/kubernetes/scheduler.conf", Type: &file}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
			},
		},
	}
	_, err = e.Clientset.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx SpecContext) {
		zero := int64(0)
		_ = e.Clientset.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		_ = e.Clientset.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
		Expect(wait.Until(ctx, wait.PodRunning, "the second scheduler to be gone", func(ctx context.Context) (bool, string, error) {
			_, err := e.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err != nil, "still there", nil
		})).To(Succeed())
	})
	e.WaitRunning(ctx, ns, name)
}
