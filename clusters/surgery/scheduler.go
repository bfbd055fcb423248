package surgery

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/topology"
)

// SchedulerProfiles are a kube-scheduler's profiles by schedulerName:
// true keeps the NodeDeclaredFeatures plugin, false disables it.
type SchedulerProfiles map[string]bool

// Config is a KubeSchedulerConfiguration with these profiles, talking to
// the apiserver as the default scheduler does (its kubeconfig) at qps,
// without leader election (one replica).
func (p SchedulerProfiles) Config(qps int) []byte {
	config := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" +
		fmt.Sprintf("clientConnection: {kubeconfig: %s, qps: %d, burst: %d}\n", SchedulerKubeconfig, qps, 2*qps) +
		"leaderElection: {leaderElect: false}\nprofiles:\n"
	for _, name := range slices.Sorted(maps.Keys(p)) {
		config += fmt.Sprintf("- schedulerName: %s\n", name)
		if !p[name] {
			config += "  plugins: {multiPoint: {disabled: [{name: NodeDeclaredFeatures}]}}\n"
		}
	}
	return []byte(config)
}

// SchedulerKubeconfig is the default kube-scheduler's kubeconfig on a
// control-plane node (kubeadm's).
const SchedulerKubeconfig = "/etc/kubernetes/scheduler.conf"

// ExtraSchedulerConfigPath is where an extra scheduler's configuration
// lives on the control-plane node: outside the static pod folder, whose
// every file the kubelet reads as a pod.
func ExtraSchedulerConfigPath(name string) string { return "/etc/kubernetes/ndfq/" + name + ".yaml" }

// ExtraSchedulerPortBase is the first extra scheduler's secure port; the
// next ones follow (the default scheduler holds 10259 on the host).
const ExtraSchedulerPortBase = 10300

// MetricsPortAnnotation names an extra scheduler's secure port on its pod,
// where the e2e Prometheus finds it.
const MetricsPortAnnotation = "ndfq.io/metrics-port"

// extraSchedulerManifest derives an extra scheduler's static pod from the
// default one's manifest: the same image, priority and kubeconfig mount;
// its own name, container, profile and gates; its own secure port, whose
// /metrics authenticates and authorizes through the apiserver as the
// default's does (kubeadm's scheduler.conf); no declared host port and no
// health probes (the default's are on 10259).
func extraSchedulerManifest(defaultManifest []byte, s topology.ExtraScheduler, port int) ([]byte, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(defaultManifest, &pod); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == "kube-scheduler" })
	if i < 0 {
		return nil, fmt.Errorf("no container kube-scheduler")
	}
	c := pod.Spec.Containers[i]
	c.Name = s.Name
	c.Command = []string{"kube-scheduler", "--config=" + ExtraSchedulerConfigPath(s.Name),
		fmt.Sprintf("--secure-port=%d", port), "--bind-address=0.0.0.0",
		"--authentication-kubeconfig=" + SchedulerKubeconfig, "--authorization-kubeconfig=" + SchedulerKubeconfig}
	if len(s.FeatureGates) > 0 {
		c.Command = append(c.Command, "--feature-gates="+topology.FormatGates(s.FeatureGates))
	}
	c.Args = nil
	// Nor the default's declared host port (kubeadm's probe-port 10259):
	// the kubelet refuses a second pod that asks for it (NodePorts).
	c.Ports = nil
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = nil, nil, nil
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "ndfq-config", MountPath: ExtraSchedulerConfigPath(s.Name), ReadOnly: true})
	file := corev1.HostPathFile
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "ndfq-config",
		VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: ExtraSchedulerConfigPath(s.Name), Type: &file}}})
	pod.Spec.Containers = []corev1.Container{c}
	pod.Name = s.Name
	// Not component=kube-scheduler: that selects the default scheduler.
	pod.Labels = map[string]string{"component": s.Name, "tier": "control-plane", "app.kubernetes.io/managed-by": "ndfq"}
	pod.Annotations = map[string]string{MetricsPortAnnotation: strconv.Itoa(port)}
	return yaml.Marshal(&pod)
}

// StartExtraScheduler writes an extra scheduler's configuration and
// static pod onto the control-plane node; the kubelet starts it.
func StartExtraScheduler(node nodes.Node, s topology.ExtraScheduler, port int) error {
	def, err := ReadFile(node, ManifestPath("kube-scheduler"))
	if err != nil {
		return err
	}
	manifest, err := extraSchedulerManifest(def, s, port)
	if err != nil {
		return fmt.Errorf("%s on %s: %w", ManifestPath("kube-scheduler"), node, err)
	}
	if err := node.Command("mkdir", "-p", "/etc/kubernetes/ndfq").Run(); err != nil {
		return fmt.Errorf("mkdir /etc/kubernetes/ndfq on %s: %w", node, err)
	}
	if err := WriteFile(node, ExtraSchedulerConfigPath(s.Name), extraSchedulerConfig(s)); err != nil {
		return err
	}
	return WriteFile(node, ManifestPath(s.Name), manifest)
}

func extraSchedulerConfig(s topology.ExtraScheduler) []byte {
	return SchedulerProfiles{s.Name: !s.IgnoresDeclarations}.Config(100)
}

// ExtraSchedulerConfigured says whether the node runs the extra scheduler
// with the configuration StartExtraScheduler writes for it (its profile,
// with or without the plugin).
func ExtraSchedulerConfigured(node nodes.Node, s topology.ExtraScheduler) (bool, error) {
	got, err := ReadFile(node, ExtraSchedulerConfigPath(s.Name))
	if err != nil {
		return false, err
	}
	return bytes.Equal(got, extraSchedulerConfig(s)), nil
}
