package surgery

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/topology"
)

// kubeadmScheduler is the shape of kubeadm's kube-scheduler manifest.
const kubeadmScheduler = `apiVersion: v1
kind: Pod
metadata:
  labels: {component: kube-scheduler, tier: control-plane}
  name: kube-scheduler
  namespace: kube-system
spec:
  containers:
  - command: [kube-scheduler, --kubeconfig=/etc/kubernetes/scheduler.conf, --leader-elect=true, --feature-gates=A=true]
    image: registry.k8s.io/kube-scheduler:v1.37.2
    name: kube-scheduler
    livenessProbe: {httpGet: {host: 127.0.0.1, path: /livez, port: 10259, scheme: HTTPS}}
    ports: [{containerPort: 10259, name: probe-port, protocol: TCP}]
    volumeMounts: [{mountPath: /etc/kubernetes/scheduler.conf, name: kubeconfig, readOnly: true}]
  hostNetwork: true
  priorityClassName: system-node-critical
  volumes: [{hostPath: {path: /etc/kubernetes/scheduler.conf, type: FileOrCreate}, name: kubeconfig}]
`

func TestExtraSchedulerIsTheDefaultsImageWithItsOwnProfile(t *testing.T) {
	s := topology.ExtraScheduler{Name: "legacy", IgnoresDeclarations: true, FeatureGates: map[string]bool{"B": false}}
	out, err := extraSchedulerManifest([]byte(kubeadmScheduler), s, 10300)
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(out, &pod); err != nil {
		t.Fatal(err)
	}
	c := pod.Spec.Containers[0]
	if pod.Name != "legacy" || pod.Labels["component"] != "legacy" || c.Name != "legacy" {
		t.Errorf("named %s, component %s, container %s: want legacy for each (component=kube-scheduler selects the default)", pod.Name, pod.Labels["component"], c.Name)
	}
	if c.Image != "registry.k8s.io/kube-scheduler:v1.37.2" || !pod.Spec.HostNetwork || pod.Spec.PriorityClassName != "system-node-critical" {
		t.Errorf("the default's image, network and priority: %s %v %s", c.Image, pod.Spec.HostNetwork, pod.Spec.PriorityClassName)
	}
	want := []string{"kube-scheduler", "--config=/etc/kubernetes/ndfq/legacy.yaml", "--secure-port=10300", "--bind-address=0.0.0.0",
		"--authentication-kubeconfig=/etc/kubernetes/scheduler.conf", "--authorization-kubeconfig=/etc/kubernetes/scheduler.conf", "--feature-gates=B=false"}
	if !slices.Equal(c.Command, want) {
		t.Errorf("command %q, want %q (none of the default's gates)", c.Command, want)
	}
	if c.LivenessProbe != nil || len(c.Ports) != 0 {
		t.Error("no health probe and no declared host port: the default's are on 10259 (the kubelet would refuse the pod: NodePorts)")
	}
	if pod.Annotations[MetricsPortAnnotation] != "10300" {
		t.Errorf("its secure port, for Prometheus to find: %v", pod.Annotations)
	}
	if len(pod.Spec.Volumes) != 2 || len(c.VolumeMounts) != 2 {
		t.Errorf("kubeconfig and config mounted: %v %v", pod.Spec.Volumes, c.VolumeMounts)
	}
	if gates, _ := gatesFromArgs(c.Command); len(gates) != 1 || gates["B"] {
		t.Errorf("its gates read back as a component's: %v", gates)
	}
}

func TestSchedulerConfigDisablesThePluginPerProfile(t *testing.T) {
	got := string(SchedulerProfiles{"with": true, "without": false}.Config(100))
	for _, want := range []string{"kubeconfig: /etc/kubernetes/scheduler.conf, qps: 100, burst: 200",
		"- schedulerName: with\n- schedulerName: without\n  plugins: {multiPoint: {disabled: [{name: NodeDeclaredFeatures}]}}\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("config\n%s\nwant %q", got, want)
		}
	}
}
