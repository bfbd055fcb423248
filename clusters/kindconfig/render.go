// Package kindconfig renders a topology into kind's v1alpha4 cluster
// configuration: one image per node, kubelet gates per node, apiserver and
// scheduler gates through kubeadm's ClusterConfiguration, never kind's
// cluster-wide featureGates (they reach every component of every node: a
// 1.34 kubelet dies on the unknown gate, a 1.37 one refuses NDF=false).
package kindconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/ndfq/ndfq/clusters/topology"
)

// SchedulerMetricsPort is the kube-scheduler's secure port, published on
// 127.0.0.1 so its /metrics (and its gates) can be read from the host.
const SchedulerMetricsPort = 10259

// NoKubeProxy is kind's kubeProxyMode that skips kubeadm's kube-proxy
// addon (kind's v1alpha4 package has no constant for it).
const NoKubeProxy v1alpha4.ProxyMode = "none"

// PatchesDir is where a node finds its kubeadm patches (kubelet config).
const PatchesDir = "/kind/ndfq-patches"

// Options are the host facts rendering depends on.
type Options struct {
	// Images maps each node kind (kubelet version and runtime) to its node image.
	Images map[topology.NodeKind]string
	// CgroupV1 host: kubelets >= 1.35 refuse cgroup v1 unless told otherwise.
	CgroupV1 bool
	// WorkDir receives per-pool kubeadm patch files mounted into nodes.
	WorkDir string
}

// NodeName is the name kind gives the i-th (0-based) node of a role.
func NodeName(cluster string, role v1alpha4.NodeRole, i int) string {
	prefix := cluster + "-worker"
	if role == v1alpha4.ControlPlaneRole {
		prefix = cluster + "-control-plane"
	}
	if i == 0 {
		return prefix
	}
	return fmt.Sprintf("%s%d", prefix, i+1)
}

// Render returns the kind configuration for t and writes any patch files.
func Render(t *topology.Topology, o Options) (*v1alpha4.Cluster, error) {
	cfg := &v1alpha4.Cluster{
		TypeMeta:   v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:       ClusterName(t),
		Networking: v1alpha4.Networking{DisableDefaultCNI: true},
	}
	if _, ok := t.DeploysKubeProxy(); ok {
		// kind then skips kubeadm's kube-proxy addon; lifecycle deploys the topology's.
		cfg.Networking.KubeProxyMode = NoKubeProxy
	}
	cp := t.Pools()[0].Kind()
	cpImage, ok := o.Images[cp]
	if !ok {
		return nil, fmt.Errorf("no node image for control plane %s", cp)
	}
	// The first control-plane node runs kubeadm init; the others of an HA
	// control plane join it. Only the first publishes its scheduler's port.
	for i := 0; i < t.ControlPlaneCount(); i++ {
		cpNode := v1alpha4.Node{
			Role:   v1alpha4.ControlPlaneRole,
			Image:  cpImage,
			Labels: map[string]string{topology.PoolLabel: topology.ControlPlanePool},
		}
		kubeadmKind := "JoinConfiguration"
		if i == 0 {
			kubeadmKind = "InitConfiguration"
		}
		// Every control-plane node's: the scheduler read is the one that leads.
		cpNode.ExtraPortMappings = []v1alpha4.PortMapping{{
			ContainerPort: SchedulerMetricsPort, HostPort: 0, ListenAddress: "127.0.0.1",
		}}
		patches, err := kubeletPatches(kubeadmKind, topology.ControlPlanePool, t.ControlPlane.Kubelet, o)
		if err != nil {
			return nil, err
		}
		cpNode.KubeadmConfigPatches = patches.kubeadm
		cpNode.ExtraMounts = patches.mounts
		cfg.Nodes = append(cfg.Nodes, cpNode)
	}
	for _, pool := range t.Workers {
		img, ok := o.Images[pool.Kind()]
		if !ok {
			return nil, fmt.Errorf("no node image for pool %s (%s)", pool.Name, pool.Kind())
		}
		patches, err := kubeletPatches("JoinConfiguration", pool.Name, pool.Kubelet, o)
		if err != nil {
			return nil, err
		}
		for i := 0; i < pool.Count; i++ {
			cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{
				Role:                 v1alpha4.WorkerRole,
				Image:                img,
				Labels:               map[string]string{topology.PoolLabel: pool.Name},
				KubeadmConfigPatches: patches.kubeadm,
				ExtraMounts:          patches.mounts,
			})
		}
	}
	cluster, err := clusterPatch(t, o)
	if err != nil {
		return nil, err
	}
	cfg.KubeadmConfigPatches = cluster
	return cfg, nil
}

// Plain is a kind config as a kind user writes one: a control plane and
// workers of the given node images, no node labels, no ndfq settings;
// only what this host needs of every kind cluster (no default CNI, which
// is an image it cannot pull; the kubelet's cgroup v1 opt-in).
func Plain(name, controlPlaneImage string, workerImages ...string) *v1alpha4.Cluster {
	cfg := &v1alpha4.Cluster{
		TypeMeta:   v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:       name,
		Networking: v1alpha4.Networking{DisableDefaultCNI: true},
		Nodes:      []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: controlPlaneImage}},
	}
	for _, img := range workerImages {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: img})
	}
	if HostIsCgroupV1() {
		data, _ := yaml.Marshal(kubeletConfig(Options{CgroupV1: true}))
		cfg.KubeadmConfigPatches = []string{string(data)}
	}
	return cfg
}

// ClusterName is the kind cluster name of a topology.
// Dots become dashes: node names double as hostnames.
func ClusterName(t *topology.Topology) string { return "ndfq-" + strings.ReplaceAll(t.Name, ".", "-") }

type nodePatches struct {
	kubeadm []string
	mounts  []v1alpha4.Mount
}

// kubeletPatches sets a node's kubelet flags through kubeadm's
// nodeRegistration (map style without apiVersion, so kind converts it for
// v1beta3 and v1beta4 alike) and its kubelet config through a patch file.
func kubeletPatches(kind, pool string, k topology.Kubelet, o Options) (nodePatches, error) {
	var out nodePatches
	args := map[string]string{}
	for a, v := range k.ExtraArgs {
		args[a] = v
	}
	if len(k.FeatureGates) > 0 {
		args["feature-gates"] = topology.FormatGates(k.FeatureGates)
	}
	doc := map[string]any{"kind": kind}
	if len(args) > 0 {
		doc["nodeRegistration"] = map[string]any{"kubeletExtraArgs": args}
	}
	if len(k.Config) > 0 {
		if o.WorkDir == "" {
			return out, fmt.Errorf("pool %s sets kubelet config but no work folder was given for its patch", pool)
		}
		dir := filepath.Join(o.WorkDir, "patches", pool)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return out, err
		}
		data, err := yaml.Marshal(k.Config)
		if err != nil {
			return out, err
		}
		if err := os.WriteFile(filepath.Join(dir, "kubeletconfiguration+strategic.yaml"), data, 0o644); err != nil {
			return out, err
		}
		doc["patches"] = map[string]any{"directory": PatchesDir}
		out.mounts = append(out.mounts, v1alpha4.Mount{HostPath: dir, ContainerPath: PatchesDir, Readonly: true})
	}
	if len(doc) == 1 {
		return out, nil
	}
	data, err := yaml.Marshal(doc)
	if err != nil {
		return out, err
	}
	out.kubeadm = []string{string(data)}
	return out, nil
}

// clusterPatch sets apiserver and scheduler flags, and keeps kubelets
// running on cgroup v1 hosts.
func clusterPatch(t *topology.Topology, o Options) ([]string, error) {
	component := func(c topology.ComponentFlags, extra map[string]string) map[string]string {
		args := map[string]string{}
		for k, v := range extra {
			args[k] = v
		}
		for k, v := range c.ExtraArgs {
			args[k] = v
		}
		if len(c.FeatureGates) > 0 {
			args["feature-gates"] = topology.FormatGates(c.FeatureGates)
		}
		return args
	}
	cc := map[string]any{"kind": "ClusterConfiguration"}
	if api := component(t.ControlPlane.APIServer, nil); len(api) > 0 {
		cc["apiServer"] = map[string]any{"extraArgs": api}
	}
	// The scheduler listens beyond loopback so its port can be published.
	scheduler := map[string]string{"bind-address": "0.0.0.0"}
	controllerManager := map[string]string{"node-monitor-grace-period": gracePeriodArg()}
	if !t.LeaderElection() {
		// One control-plane node has nothing to elect; on 2 cores under a
		// suite's load a lease renewal missed by 10 s would restart the
		// scheduler and controller-manager mid-spec.
		scheduler["leader-elect"] = "false"
		controllerManager["leader-elect"] = "false"
	}
	cc["controllerManager"] = map[string]any{"extraArgs": controllerManager}
	cc["scheduler"] = map[string]any{"extraArgs": component(t.ControlPlane.Scheduler, scheduler)}
	var out []string
	for _, doc := range []map[string]any{cc, lifecycleKubeletConfig(kubeletConfig(o))} {
		if doc == nil {
			continue
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, string(data))
	}
	return out, nil
}

// kubeletConfig is the cluster's KubeletConfiguration patch: on a cgroup
// v1 host the kubelet must be told it may run there.
func kubeletConfig(o Options) map[string]any {
	doc := map[string]any{"kind": "KubeletConfiguration"}
	if o.CgroupV1 {
		doc["failCgroupV1"] = false
	}
	return doc
}

// Marshal renders the configuration as kind's YAML (for artifacts and tests).
func Marshal(cfg *v1alpha4.Cluster) ([]byte, error) { return yaml.Marshal(cfg) }

// HostIsCgroupV1 reports whether the unified cgroup v2 hierarchy is absent.
func HostIsCgroupV1() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err != nil
}
