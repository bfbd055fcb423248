package topology

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ndfq/ndfq/fixtures"
)

func TestShippedTopologiesAreValid(t *testing.T) {
	names := Names()
	for _, want := range []string{"skew-1.37", "gates-1.36", "alpha-1.35"} {
		if !slices.Contains(names, want) {
			t.Errorf("topology %s is not shipped (have %v)", want, names)
		}
	}
	for _, n := range names {
		if _, err := Load(n); err != nil {
			t.Errorf("shipped topology %s: %v", n, err)
		}
	}
}

func TestDefaultTopologyShape(t *testing.T) {
	top, err := Load(DefaultName)
	if err != nil {
		t.Fatal(err)
	}
	if top.NodeCount() != 10 {
		t.Errorf("skew-1.37 has %d nodes, want 10", top.NodeCount())
	}
	if got := fmt.Sprint(top.Versions()); got != "[v1.34.12 v1.35.8 v1.36.5 v1.37.2]" {
		t.Errorf("versions %s", got)
	}
	if got := fmt.Sprint(top.Kinds()); got != "[v1.34.12 v1.35.8 v1.36.5 v1.37.2 v1.37.2+containerd-2.4.2]" {
		t.Errorf("node kinds %s", got)
	}
}

// An HA control plane is a pool of several nodes, each counted once.
func TestHAControlPlaneShape(t *testing.T) {
	top, err := Load("ha-1.37")
	if err != nil {
		t.Fatal(err)
	}
	if top.ControlPlaneCount() != 2 || top.NodeCount() != 4 {
		t.Errorf("ha-1.37: %d control-plane nodes of %d, want 2 of 4", top.ControlPlaneCount(), top.NodeCount())
	}
	if cp := top.Pools()[0]; cp.Name != ControlPlanePool || cp.Count != 2 {
		t.Errorf("control-plane pool %s of %d nodes", cp.Name, cp.Count)
	}
	if def, _ := Load(DefaultName); def.ControlPlaneCount() != 1 {
		t.Errorf("%s: an unset count is one control-plane node, got %d", DefaultName, def.ControlPlaneCount())
	}
}

const base = `name: t
controlPlane:
  version: 1.37.2
workers:
`

// Each bad input must be refused before provisioning, with a message that
// names the field and the rule.
func TestValidationRefusesBadInput(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown minor", "name: t\ncontrolPlane:\n  version: 1.39.0\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n",
			"controlPlane.version 1.39.0: ndfq has no oracle for Kubernetes 1.39"},
		{"unknown runtime", base + "  - {name: a, count: 1, version: 1.37.2, runtime: cri-o-1.30}\n",
			`workers[0] (a).runtime: unknown runtime "cri-o-1.30": ndfq builds containerd-1.6, containerd-2.4.2`},
		{"not a version", base + "  - {name: a, count: 1, version: latest}\n",
			`workers[0] (a).version: "latest" is not a Kubernetes release version`},
		{"kubelet newer than apiserver", "name: t\ncontrolPlane:\n  version: 1.36.3\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n",
			"kubelet v1.37.2 is newer than kube-apiserver v1.36.3"},
		{"kubelet of a minor without an oracle", "name: t\ncontrolPlane:\n  version: 1.37.2\nworkers:\n  - {name: a, count: 1, version: 1.33.0}\n",
			"no oracle for Kubernetes 1.33"},
		{"NDF unknown to 1.34", base + "  - name: a\n    count: 1\n    version: 1.34.4\n    kubelet: {featureGates: {NodeDeclaredFeatures: true}}\n",
			"workers[0] (a).kubelet.featureGates: unrecognized feature gate: NodeDeclaredFeatures (Kubernetes 1.34 does not have it)"},
		{"NDF locked on 1.37", base + "  - name: a\n    count: 1\n    version: 1.37.2\n    kubelet: {featureGates: {NodeDeclaredFeatures: false}}\n",
			"cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true (Kubernetes 1.37)"},
		{"NDF locked on 1.37 apiserver", "name: t\ncontrolPlane:\n  version: 1.37.2\n  apiServer: {featureGates: {NodeDeclaredFeatures: false}}\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n",
			"controlPlane.apiServer.featureGates: cannot set feature gate NodeDeclaredFeatures to false"},
		{"1.35 dependent without NDF", base + "  - name: a\n    count: 1\n    version: 1.35.4\n    kubelet: {featureGates: {RestartAllContainersOnContainerExits: true}}\n",
			"feature gate RestartAllContainersOnContainerExits depends on NodeDeclaredFeatures, which is disabled (Kubernetes 1.35)"},
		{"1.36 NDF off alone", "name: t\ncontrolPlane:\n  version: 1.36.3\nworkers:\n  - name: a\n    count: 1\n    version: 1.36.3\n    kubelet: {featureGates: {NodeDeclaredFeatures: false}}\n",
			"feature gate ExtendWebSocketsToKubelet depends on NodeDeclaredFeatures, which is disabled (Kubernetes 1.36)"},
		{"malformed field", base + "  - {name: a, count: 1, version: 1.37.2, kubelets: {}}\n",
			"line 5: field kubelets not found in type topology.Pool"},
		{"malformed type", base + "  - {name: a, count: many, version: 1.37.2}\n",
			"line 5: cannot unmarshal !!str `many` into int"},
		{"duplicate pool", base + "  - {name: a, count: 1, version: 1.37.2}\n  - {name: a, count: 1, version: 1.37.2}\n",
			`pool name "a" is used twice`},
		{"no workers", "name: t\ncontrolPlane:\n  version: 1.37.2\n", "workers: at least one pool is needed"},
		{"gates through extraArgs", "name: t\ncontrolPlane:\n  version: 1.37.2\n  scheduler: {extraArgs: {feature-gates: A=true}}\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n",
			"controlPlane.scheduler.extraArgs: set feature-gates through controlPlane.scheduler.featureGates"},
		{"empty file", "", "empty topology file"},
		{"extra scheduler named as the default", extra("{name: default-scheduler}"),
			`controlPlane.extraSchedulers[0]: name "default-scheduler" is the default scheduler's or a control-plane static pod's`},
		{"extra scheduler named twice", extra("{name: batch}, {name: batch, ignoresDeclarations: true}"),
			`controlPlane.extraSchedulers[1]: schedulerName "batch" is used twice`},
		{"extra scheduler not a DNS label", extra("{name: Batch_1}"),
			`controlPlane.extraSchedulers[0]: name "Batch_1" must be a short DNS label`},
		{"extra scheduler with a locked gate", extra("{name: batch, featureGates: {NodeDeclaredFeatures: false}}"),
			"controlPlane.extraSchedulers[0].featureGates: cannot set feature gate NodeDeclaredFeatures to false"},
		{"four control-plane nodes", "name: t\ncontrolPlane:\n  version: 1.37.2\n  count: 4\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n",
			"controlPlane.count 4 must be between 1 and 3 (0 means 1)"},
		{"negative control-plane count", "name: t\ncontrolPlane:\n  version: 1.37.2\n  count: -1\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n",
			"controlPlane.count -1 must be between 1 and 3"},
		{"extra scheduler field misspelt", extra("{name: batch, ignoreDeclarations: true}"),
			"field ignoreDeclarations not found in type topology.ExtraScheduler"},
		{"control-plane kubelet newer than kubeadm", variant("1.37.2", "1.38.0-beta.0", ""),
			"controlPlane.kubeletVersion: kubelet v1.38.0-beta.0 is newer than kube-apiserver v1.37.2 (the version skew policy forbids it) (kubeadm v1.37.2 runs beside it)"},
		{"control-plane kubelet four minors older", variant("1.38.0-beta.0", "1.34.4", ""),
			"controlPlane.kubeletVersion: kubelet v1.34.4 is 4 minors older than kube-apiserver v1.38.0-beta.0"},
		{"control-plane kubelet not a version", variant("1.38.0-beta.0", "1.37", ""),
			`controlPlane.kubeletVersion: "1.37" is not a Kubernetes release version`},
		{"control-plane kubelet of a minor without an oracle", variant("1.37.2", "1.33.0", ""),
			"controlPlane.kubeletVersion 1.33.0: ndfq has no oracle for Kubernetes 1.33"},
		{"control-plane kubelet gate unknown to its minor", "name: t\ncontrolPlane:\n  version: 1.37.2\n  kubeletVersion: 1.34.4\n  kubelet: {featureGates: {NodeDeclaredFeatures: true}}\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n",
			"controlPlane.kubelet.featureGates: unrecognized feature gate: NodeDeclaredFeatures (Kubernetes 1.34 does not have it)"},
		{"kube-proxy newer than the apiserver", variant("1.37.2", "", "1.38.0-beta.0"),
			"controlPlane.kubeProxyVersion v1.38.0-beta.0 is newer than kube-apiserver v1.37.2"},
		{"kube-proxy four minors older", variant("1.38.0-beta.0", "1.37.2", "1.34.4"),
			"controlPlane.kubeProxyVersion v1.34.4 is 4 minors older than kube-apiserver v1.38.0-beta.0"},
		{"kube-proxy not a version", variant("1.37.2", "", "latest"),
			`controlPlane.kubeProxyVersion: "latest" is not a Kubernetes release version`},
		{"more node settings than nodes", cpNodes("1.37.2", 2, "{}, {}, {}"),
			"controlPlane.nodes: 3 entries for 2 control-plane nodes (controlPlane.count)"},
		{"settings on the init node", cpNodes("1.37.2", 2, "{apiServer: {extraArgs: {disable-admission-plugins: NodeDeclaredFeatureValidator}}}"),
			"controlPlane.nodes[0]: the first node runs kubeadm init with controlPlane.apiServer"},
		{"admission plugin unknown to the minor", cpNodes("1.37.2", 2, "{}, {apiServer: {extraArgs: {disable-admission-plugins: NodeDeclaredFeatureValidater}}}"),
			`controlPlane.nodes[1].apiServer.extraArgs.disable-admission-plugins: kube-apiserver 1.37 registers no admission plugin "NodeDeclaredFeatureValidater"`},
		{"validator before it exists", "name: t\ncontrolPlane:\n  version: 1.34.4\n  apiServer: {extraArgs: {enable-admission-plugins: NodeDeclaredFeatureValidator}}\nworkers:\n  - {name: a, count: 1, version: 1.34.4}\n",
			`controlPlane.apiServer.extraArgs.enable-admission-plugins: kube-apiserver 1.34 registers no admission plugin "NodeDeclaredFeatureValidator"`},
		{"node emulating two minors back", cpNodes("1.37.2", 2, "{}, {apiServer: {extraArgs: {emulated-version: '1.35'}}}"),
			"controlPlane.nodes[1].apiServer: emulated-version 1.35 must be 1.37 or the minor before it"},
		{"node gate locked on its minor", cpNodes("1.37.2", 2, "{}, {apiServer: {featureGates: {NodeDeclaredFeatures: false}}}"),
			"controlPlane.nodes[1].apiServer.featureGates: cannot set feature gate NodeDeclaredFeatures to false"},
		{"node version", cpNodes("1.37.2", 2, "{}, {version: 1.36.3}"),
			"field version not found in type topology.ControlPlaneNode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("test.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error\n%v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// variant is a topology whose control-plane nodes run kubelet k and whose
// kube-proxy ndfq deploys at version proxy ("" for the defaults).
func variant(cp, k, proxy string) string {
	y := "name: t\ncontrolPlane:\n  version: " + cp + "\n"
	if k != "" {
		y += "  kubeletVersion: " + k + "\n"
	}
	if proxy != "" {
		y += "  kubeProxyVersion: " + proxy + "\n"
	}
	return y + "workers:\n  - {name: a, count: 1, version: 1.37.2}\n"
}

// cpNodes is a topology of count control-plane nodes with these controlPlane.nodes.
func cpNodes(cp string, count int, list string) string {
	return fmt.Sprintf("name: t\ncontrolPlane:\n  version: %s\n  count: %d\n  nodes: [%s]\nworkers:\n  - {name: a, count: 1, version: 1.36.3}\n", cp, count, list)
}

// A rolling change held open: the second apiserver emulates 1.36 with NDF
// rolled back; the first runs as kubeadm set it. The node's settings are
// laid over the control plane's, and the suites refuse the topology.
func TestControlPlaneNodeSettings(t *testing.T) {
	y := "name: t\ncontrolPlane:\n  version: 1.37.2\n  count: 2\n  apiServer: {extraArgs: {v: '2'}}\n  nodes:\n    - {}\n    - apiServer:\n        extraArgs: {emulated-version: '1.36', v: ''}\n        featureGates: {NodeDeclaredFeatures: false, ExtendWebSocketsToKubelet: false, InPlacePodLevelResourcesVerticalScaling: false, InPlacePodVerticalScalingInitContainers: false, RestartAllContainersOnContainerExits: false}\nworkers:\n  - {name: a, count: 1, version: 1.36.3}\n"
	top, err := Parse("test.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	own := top.OwnAPIServerSettings()
	if len(own) != 1 || own[1].ExtraArgs["emulated-version"] != "1.36" || own[1].FeatureGates[fixtures.NodeDeclaredFeatures] {
		t.Fatalf("settings laid over kubeadm's: %+v", own)
	}
	if got := top.NodeAPIServer(1).ExtraArgs; len(got) != 1 {
		t.Errorf("node 2's apiserver args %v: want emulated-version alone (v removed)", got)
	}
	want := "control-plane node 2 runs --feature-gates=ExtendWebSocketsToKubelet=false,InPlacePodLevelResourcesVerticalScaling=false,InPlacePodVerticalScalingInitContainers=false,NodeDeclaredFeatures=false,RestartAllContainersOnContainerExits=false --emulated-version=1.36"
	if d := top.APIServersDisagree(); len(d) != 1 || d[0] != want {
		t.Errorf("disagreement %q, want %q", d, want)
	}
	if err := top.ForSuites(); err == nil || !strings.Contains(err.Error(), "controlPlane.nodes makes the apiservers disagree") {
		t.Errorf("ForSuites: %v", err)
	}
	notes := strings.Join(top.ControlPlaneNotes(), "\n")
	if !strings.Contains(notes, "control-plane node 1 runs --v=2; "+want) {
		t.Errorf("notes %q", notes)
	}
	// Settings equal to the control plane's change nothing, and the suites take it.
	same, err := Parse("test.yaml", []byte(cpNodes("1.37.2", 2, "{}, {apiServer: {extraArgs: {v: ''}}}")))
	if err != nil {
		t.Fatal(err)
	}
	if len(same.OwnAPIServerSettings()) != 0 || same.ForSuites() != nil {
		t.Errorf("settings that change nothing: %v, %v", same.OwnAPIServerSettings(), same.ForSuites())
	}
	for _, name := range Names() {
		if top, _ := Load(name); top != nil && top.ForSuites() != nil && name != "ha-window-1.37" {
			t.Errorf("shipped %s: %v", name, top.ForSuites())
		}
	}
}

// extra is a valid topology with these controlPlane.extraSchedulers.
func extra(list string) string {
	return "name: t\ncontrolPlane:\n  version: 1.37.2\n  extraSchedulers: [" + list + "]\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n"
}

func TestKubeletSkewPolicy(t *testing.T) {
	if msg := kubeletSkew("v1.37.2", "v1.34.4"); msg != "" {
		t.Errorf("3 minors older must be allowed: %s", msg)
	}
	if msg := kubeletSkew("v1.38.0", "v1.34.4"); !strings.Contains(msg, "4 minors older") {
		t.Errorf("4 minors older must be refused, got %q", msg)
	}
	if msg := kubeletSkew("v1.37.2", "v1.37.9"); msg != "" {
		t.Errorf("a newer patch of the same minor is allowed: %s", msg)
	}
}

func TestEmulatedVersionMovesGateRules(t *testing.T) {
	y := "name: t\ncontrolPlane:\n  version: 1.37.2\n  apiServer:\n    featureGates: {NodeDeclaredFeatures: false, RestartAllContainersOnContainerExits: false, InPlacePodLevelResourcesVerticalScaling: false, InPlacePodVerticalScalingInitContainers: false, ExtendWebSocketsToKubelet: false}\n    extraArgs: {emulated-version: \"1.36\"}\nworkers:\n  - {name: a, count: 1, version: 1.37.2}\n"
	if _, err := Parse("t.yaml", []byte(y)); err != nil {
		t.Fatalf("1.37 apiserver emulating 1.36 may turn NDF off: %v", err)
	}
	bad := strings.Replace(y, `"1.36"`, `"1.34"`, 1)
	if _, err := Parse("t.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "emulated-version 1.34 must be 1.37 or the minor before it") {
		t.Fatalf("emulating two minors back must be refused, got %v", err)
	}
}

func TestLoadUnknownName(t *testing.T) {
	_, err := Load("nope")
	if err == nil || !strings.Contains(err.Error(), `no topology "nope": shipped ones are`) {
		t.Fatalf("got %v", err)
	}
}

// KUBERNETES_VERSION replaces the control plane and is validated like the
// file: skew and the oracle still decide before anything is built.
func TestLoadWithControlPlaneVersion(t *testing.T) {
	top, err := LoadWith("next", "1.38.0-beta.0")
	if err != nil || top.ControlPlaneVersion() != "v1.38.0-beta.0" {
		t.Fatalf("got %v, %v", top, err)
	}
	if _, err := LoadWith("skew-1.37", "1.38.0-beta.0"); err == nil || !strings.Contains(err.Error(), "legacy") || !strings.Contains(err.Error(), "4 minors older") {
		t.Errorf("a 1.34 kubelet under a 1.38 control plane must be refused, got %v", err)
	}
	if _, err := LoadWith("next", "1.39.0-alpha.1"); err == nil || !strings.Contains(err.Error(), "no oracle for Kubernetes 1.39") {
		t.Errorf("got %v", err)
	}
}

// next runs a 1.38 control plane whose nodes carry the 1.37 kubelet, and
// the 1.37 kube-proxy: its kubelets and node kinds are those, not 1.38.
func TestNextRunsAVariantControlPlane(t *testing.T) {
	top, err := Load("next")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(top.Versions()); got != "[v1.35.4 v1.36.3 v1.37.2]" {
		t.Errorf("kubelet versions %s", got)
	}
	cp := top.Pools()[0]
	if cp.PoolVersion() != "v1.37.2" || cp.Intent().Version != "1.37.2" {
		t.Errorf("control-plane pool runs kubelet %s (oracle %s), want v1.37.2", cp.PoolVersion(), cp.Intent().Version)
	}
	if got := fmt.Sprint(top.Kinds()); got != "[v1.35.4 v1.36.3 v1.37.2 v1.38.0-beta.0 control plane, kubelet v1.37.2]" {
		t.Errorf("node kinds %s", got)
	}
	if v, ok := top.DeploysKubeProxy(); !ok || v != "v1.37.2" {
		t.Errorf("kube-proxy %s deployed by ndfq: %t", v, ok)
	}
	if len(top.ControlPlaneNotes()) != 3 {
		t.Errorf("notes %q", top.ControlPlaneNotes())
	}
	def, _ := Load(DefaultName)
	if _, ok := def.DeploysKubeProxy(); ok || len(def.ControlPlaneNotes()) != 1 || def.Pools()[0].Kind().ControlPlane != "" {
		t.Errorf("%s runs kubeadm's own kube-proxy and the control plane's kubelet: %q", DefaultName, def.ControlPlaneNotes())
	}
	// One control-plane node elects no leader; an HA control plane does.
	if !strings.Contains(def.ControlPlaneNotes()[0], "--leader-elect=false") {
		t.Errorf("%s notes %q", DefaultName, def.ControlPlaneNotes())
	}
	if ha, _ := Load("ha-1.37"); !ha.LeaderElection() || slices.ContainsFunc(ha.ControlPlaneNotes(), func(n string) bool { return strings.Contains(n, "leader-elect") }) {
		t.Errorf("ha-1.37 elects leaders: %q", ha.ControlPlaneNotes())
	}
	// Both fields at the control plane's own version: no variant.
	same, err := Parse("t.yaml", []byte(variant("1.37.2", "1.37.2", "1.37.2")))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := same.DeploysKubeProxy(); ok || same.Pools()[0].Kind().ControlPlane != "" {
		t.Errorf("a control plane of the kubelet's own version is no variant")
	}
}

// A release that does not exist is refused naming the field, before
// anything is provisioned; a pool's too.
func TestUnknownReleaseIsRefused(t *testing.T) {
	for _, y := range []string{
		"name: t\ncontrolPlane: {version: 1.37.99}\nworkers: [{name: a, count: 1, version: 1.37.2}]\n",
		"name: t\ncontrolPlane: {version: 1.37.2}\nworkers: [{name: a, count: 1, version: 1.37.99}]\n",
	} {
		if _, err := Parse("t.yaml", []byte(y)); err == nil || !strings.Contains(err.Error(), "1.37.99 is not a Kubernetes release ndfq knows") {
			t.Errorf("%s: %v", y, err)
		}
	}
}
