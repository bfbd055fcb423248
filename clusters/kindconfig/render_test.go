package kindconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/kubeversion"
)

func images() map[topology.NodeKind]string {
	out := map[topology.NodeKind]string{}
	for _, v := range []kubeversion.Version{"v1.34.4", "v1.34.12", "v1.35.4", "v1.35.8", "v1.36.3", "v1.36.5", "v1.37.2"} {
		out[topology.NodeKind{Version: v, Runtime: fixtures.DefaultRuntime}] = "ndfq/node:" + string(v)
	}
	out[topology.NodeKind{Version: "v1.37.2", Runtime: "containerd-2.4.2"}] = "ndfq/node:v1.37.2-containerd-2.4.2"
	return out
}

func TestRenderSkewTopology(t *testing.T) {
	top, err := topology.Load("skew-1.37")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Render(top, Options{Images: images(), CgroupV1: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "ndfq-skew-1-37" {
		t.Errorf("cluster name %q", cfg.Name)
	}
	if len(cfg.Nodes) != top.NodeCount() || len(cfg.Nodes) != 10 {
		t.Fatalf("%d nodes, want 10 (skew-1.37)", len(cfg.Nodes))
	}
	if len(cfg.FeatureGates) != 0 {
		t.Errorf("kind's cluster-wide featureGates reach every kubelet and must stay empty: %v", cfg.FeatureGates)
	}
	if !cfg.Networking.DisableDefaultCNI {
		t.Error("kindnetd cannot be had offline: the default CNI must be disabled")
	}
	byPool := map[string]int{}
	for i, n := range cfg.Nodes {
		pool := n.Labels[topology.PoolLabel]
		byPool[pool] = i
	}
	legacy := cfg.Nodes[byPool["legacy"]]
	if legacy.Image != "ndfq/node:v1.34.12" {
		t.Errorf("legacy pool image %s", legacy.Image)
	}
	if len(legacy.KubeadmConfigPatches) != 0 {
		t.Errorf("a 1.34 kubelet must get no feature-gates flag at all: %v", legacy.KubeadmConfigPatches)
	}
	if img := cfg.Nodes[byPool["runtime-v2"]].Image; img != "ndfq/node:v1.37.2-containerd-2.4.2" {
		t.Errorf("the containerd 2 pool must run its runtime's image, not %s", img)
	}
	on := cfg.Nodes[byPool["n-2-on"]]
	if len(on.KubeadmConfigPatches) != 1 || !strings.Contains(on.KubeadmConfigPatches[0], "feature-gates: NodeDeclaredFeatures=true,RestartAllContainersOnContainerExits=true") ||
		!strings.Contains(on.KubeadmConfigPatches[0], "kind: JoinConfiguration") || strings.Contains(on.KubeadmConfigPatches[0], "apiVersion") {
		t.Errorf("n-2-on patch must be a JoinConfiguration without apiVersion carrying its gates:\n%v", on.KubeadmConfigPatches)
	}
	cp := cfg.Nodes[0]
	if cp.Labels[topology.PoolLabel] != topology.ControlPlanePool || cp.Image != "ndfq/node:v1.37.2" {
		t.Errorf("control plane node %+v", cp)
	}
	if len(cp.ExtraPortMappings) != 1 || cp.ExtraPortMappings[0].ListenAddress != "127.0.0.1" || cp.ExtraPortMappings[0].ContainerPort != SchedulerMetricsPort {
		t.Errorf("scheduler port must be published on loopback only: %+v", cp.ExtraPortMappings)
	}
	joined := strings.Join(cfg.KubeadmConfigPatches, "---\n")
	if !strings.Contains(joined, "failCgroupV1: false") {
		t.Errorf("cgroup v1 host needs failCgroupV1: false:\n%s", joined)
	}
	for _, want := range []string{"nodeLeaseDurationSeconds: 20", "nodeStatusUpdateFrequency: 5s", "node-monitor-grace-period: 35s"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the node lifecycle periods (lifecycle.go) need %q:\n%s", want, joined)
		}
	}
	if !strings.Contains(joined, "bind-address: 0.0.0.0") {
		t.Errorf("scheduler must listen beyond loopback for its published port:\n%s", joined)
	}
	raw, err := Marshal(cfg)
	if err != nil || !strings.Contains(string(raw), "apiVersion: kind.x-k8s.io/v1alpha4") {
		t.Errorf("marshal: %v\n%s", err, raw)
	}
}

func TestRenderCgroupV2HostHasNoKubeletPatch(t *testing.T) {
	top, _ := topology.Load("skew-1.37")
	cfg, err := Render(top, Options{Images: images(), CgroupV1: false})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(cfg.KubeadmConfigPatches, ""), "failCgroupV1") {
		t.Error("cgroup v2 hosts keep the kubelet's default")
	}
}

func TestRenderControlPlaneGates(t *testing.T) {
	y := "name: g\ncontrolPlane:\n  version: 1.36.3\n  apiServer: {featureGates: {NodeDeclaredFeatures: true}}\n  scheduler: {featureGates: {NodeDeclaredFeatures: true}, extraArgs: {v: \"2\"}}\nworkers:\n  - {name: a, count: 2, version: 1.36.3}\n"
	top, err := topology.Parse("g.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Render(top, Options{Images: images()})
	if err != nil {
		t.Fatal(err)
	}
	cc := cfg.KubeadmConfigPatches[0]
	for _, want := range []string{"kind: ClusterConfiguration", "apiServer:\n  extraArgs:\n    feature-gates: NodeDeclaredFeatures=true", "scheduler:\n  extraArgs:\n    bind-address: 0.0.0.0\n    feature-gates: NodeDeclaredFeatures=true\n    leader-elect: \"false\"\n    v: \"2\"", "controllerManager:\n  extraArgs:\n    leader-elect: \"false\"\n    node-monitor-grace-period: 35s"} {
		if !strings.Contains(cc, want) {
			t.Errorf("ClusterConfiguration patch lacks %q:\n%s", want, cc)
		}
	}
	if len(cfg.Nodes) != 3 {
		t.Errorf("pool count 2 must render 2 workers: %d nodes", len(cfg.Nodes))
	}
	// Two control-plane nodes run two schedulers: they elect a leader.
	ha, err := topology.Parse("g.yaml", []byte(strings.Replace(y, "version: 1.36.3\n  apiServer", "version: 1.36.3\n  count: 2\n  apiServer", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = Render(ha, Options{Images: images()}); err != nil {
		t.Fatal(err)
	}
	if cc := cfg.KubeadmConfigPatches[0]; strings.Contains(cc, "leader-elect") {
		t.Errorf("an HA control plane keeps leader election:\n%s", cc)
	}
}

func TestRenderKubeletConfigPatchIsMounted(t *testing.T) {
	y := "name: k\ncontrolPlane:\n  version: 1.35.4\nworkers:\n  - name: static\n    count: 1\n    version: 1.35.4\n    kubelet: {config: {cpuManagerPolicy: static}}\n"
	top, err := topology.Parse("k.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg, err := Render(top, Options{Images: images(), WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Nodes[1]
	if len(w.ExtraMounts) != 1 || w.ExtraMounts[0].ContainerPath != PatchesDir {
		t.Fatalf("mounts %+v", w.ExtraMounts)
	}
	data, err := os.ReadFile(filepath.Join(w.ExtraMounts[0].HostPath, "kubeletconfiguration+strategic.yaml"))
	if err != nil || strings.TrimSpace(string(data)) != "cpuManagerPolicy: static" {
		t.Fatalf("patch file: %v %q", err, data)
	}
	if !strings.Contains(w.KubeadmConfigPatches[0], "directory: "+PatchesDir) {
		t.Errorf("JoinConfiguration must point kubeadm at the patches: %s", w.KubeadmConfigPatches[0])
	}
}

func TestRenderMissingImage(t *testing.T) {
	top, _ := topology.Load("skew-1.37")
	imgs := images()
	delete(imgs, topology.NodeKind{Version: "v1.34.12", Runtime: fixtures.DefaultRuntime})
	if _, err := Render(top, Options{Images: imgs}); err == nil || !strings.Contains(err.Error(), "no node image for pool legacy (v1.34.12)") {
		t.Fatalf("got %v", err)
	}
}

// An HA control plane: kubeadm init on the first node, the others join as
// control-plane nodes with the same kubelet settings; only the first
// publishes the scheduler's port.
func TestRenderHAControlPlane(t *testing.T) {
	top, err := topology.Parse("ha.yaml", []byte("name: ha\ncontrolPlane:\n  version: 1.37.2\n  count: 3\n  kubelet: {featureGates: {InPlacePodLevelResourcesVerticalScaling: false}}\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Render(top, Options{Images: images()})
	if err != nil {
		t.Fatal(err)
	}
	var cps []int
	for i, n := range cfg.Nodes {
		if n.Role == "control-plane" {
			cps = append(cps, i)
		}
	}
	if len(cps) != 3 || cps[0] != 0 || cps[2] != 2 {
		t.Fatalf("control-plane nodes at %v, want the first three of %d", cps, len(cfg.Nodes))
	}
	for i, kind := range []string{"kind: InitConfiguration", "kind: JoinConfiguration", "kind: JoinConfiguration"} {
		n := cfg.Nodes[i]
		if n.Labels[topology.PoolLabel] != topology.ControlPlanePool || len(n.KubeadmConfigPatches) != 1 ||
			!strings.Contains(n.KubeadmConfigPatches[0], kind) || !strings.Contains(n.KubeadmConfigPatches[0], "InPlacePodLevelResourcesVerticalScaling=false") {
			t.Errorf("control-plane node %d: labels %v, patches %v; want %s with the kubelet gate", i, n.Labels, n.KubeadmConfigPatches, kind)
		}
		if got := len(n.ExtraPortMappings); got != 1 {
			t.Errorf("control-plane node %d publishes %d ports", i, got)
		}
	}
	if got := NodeName("c", "control-plane", 2); got != "c-control-plane3" {
		t.Errorf("kind names the third control-plane node %s", got)
	}
}

// A variant control plane: its nodes get the variant image, and kind skips
// kubeadm's kube-proxy (ndfq deploys the topology's own).
func TestRenderVariantControlPlane(t *testing.T) {
	top, err := topology.Load("next")
	if err != nil {
		t.Fatal(err)
	}
	imgs := images()
	variant := topology.NodeKind{Version: "v1.37.2", Runtime: fixtures.DefaultRuntime, ControlPlane: "v1.38.0-beta.0"}
	imgs[variant] = "ndfq/node:v1.38.0-beta.0-kubelet-v1.37.2"
	cfg, err := Render(top, Options{Images: imgs})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Nodes[0].Image != imgs[variant] || cfg.Nodes[1].Image != "ndfq/node:v1.37.2" {
		t.Errorf("control plane on %s, first worker on %s", cfg.Nodes[0].Image, cfg.Nodes[1].Image)
	}
	if cfg.Networking.KubeProxyMode != NoKubeProxy {
		t.Errorf("kubeProxyMode %q, want kind to skip kubeadm's kube-proxy", cfg.Networking.KubeProxyMode)
	}
	def, _ := topology.Load("skew-1.37")
	if cfg, _ := Render(def, Options{Images: images()}); cfg.Networking.KubeProxyMode != "" {
		t.Errorf("skew-1.37 runs kubeadm's kube-proxy, got mode %q", cfg.Networking.KubeProxyMode)
	}
}
