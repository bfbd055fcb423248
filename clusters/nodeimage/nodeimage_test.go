package nodeimage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ndfq/ndfq/internal/kubeversion"

	kinddefaults "sigs.k8s.io/kind/pkg/apis/config/defaults"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/gotool"
)

func TestKeyChangesWithEveryInput(t *testing.T) {
	a := KubernetesPrograms("v1.37.2", []string{Kubelet})[0]
	b := a
	b.Version = "v1.37.1"
	c := a
	c.LDFlags = append([]string{}, a.LDFlags...)
	c.LDFlags[0] = "-X changed"
	if a.key() != KubernetesPrograms("v1.37.2", []string{Kubelet})[0].key() {
		t.Error("same inputs must give the same key")
	}
	if a.key() == b.key() || a.key() == c.key() {
		t.Error("a changed version or ldflag must change the key")
	}
	if Key("x", 1) == Key("x", 2) || Key("x", []string{"a", "b"}) == Key("x", []string{"ab"}) {
		t.Error("Key must separate its inputs")
	}
}

func TestVersionLDFlagsStampRealVersion(t *testing.T) {
	flags := strings.Join(versionLDFlags("v1.35.4"), " ")
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=v1.35.4",
		"-X k8s.io/component-base/version.gitMinor=35",
		"-X k8s.io/client-go/pkg/version.gitVersion=v1.35.4",
		"-X k8s.io/client-go/pkg/version.gitMajor=1",
	} {
		if !strings.Contains(flags, want) {
			t.Errorf("ldflags lack %q: %s", want, flags)
		}
	}
}

func TestWrapperGoModPointsStagingAtPublishedModules(t *testing.T) {
	root := []byte(`module k8s.io/kubernetes

go 1.24.0

require k8s.io/api v0.0.0

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	github.com/example/x => github.com/example/y v1.2.3
)
`)
	out, err := wrapperGoMod("k8s.io/kubernetes", "v1.36.3", root)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"require k8s.io/kubernetes v1.36.3",
		"k8s.io/api => k8s.io/api v0.36.3",
		"k8s.io/client-go => k8s.io/client-go v0.36.3",
		"github.com/example/x => github.com/example/y v1.2.3",
		"go 1.24.0",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("wrapper go.mod lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "./staging") {
		t.Errorf("local paths must not survive:\n%s", s)
	}
}

func TestWrapperGoModEtcdSiblingsKeepRootVersion(t *testing.T) {
	root := []byte("module go.etcd.io/etcd/server/v3\n\ngo 1.24\n\nreplace go.etcd.io/etcd/api/v3 => ../api\n\nreplace go.etcd.io/etcd => ./FORBIDDEN_DEPENDENCY\n")
	out, err := wrapperGoMod("go.etcd.io/etcd/server/v3", "v3.7.0", root)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "FORBIDDEN") {
		t.Errorf("guard replaces must be dropped:\n%s", out)
	}
	if !strings.Contains(string(out), "go.etcd.io/etcd/api/v3 => go.etcd.io/etcd/api/v3 v3.7.0") {
		t.Errorf("got\n%s", out)
	}
}

func TestWrapperGoModRefusesNewerGo(t *testing.T) {
	_, err := wrapperGoMod("k8s.io/kubernetes", "v1.99.0", []byte("module k8s.io/kubernetes\n\ngo 9.0\n"))
	if err == nil || !strings.Contains(err.Error(), "needs go 9.0") {
		t.Fatalf("got %v", err)
	}
}

// 1.38 needs Go 1.27: the wrapper names the approved toolchain, and every
// go command run in it switches to that toolchain.
func TestWrapperGoModSwitchesToApprovedToolchain(t *testing.T) {
	out, err := wrapperGoMod("k8s.io/kubernetes", "v1.38.0-beta.0", []byte("module k8s.io/kubernetes\n\ngo 1.27.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "toolchain go1.27.3") {
		t.Fatalf("got\n%s", out)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	if env := gotool.Env(dir); !slices.Contains(env, "GOTOOLCHAIN=go1.27.3") {
		t.Errorf("env %v", env[len(env)-4:])
	}
	if env := gotool.Env(t.TempDir()); !slices.Contains(env, "GOTOOLCHAIN=local") {
		t.Errorf("env %v", env[len(env)-4:])
	}
}

func TestParseKubernetesVersion(t *testing.T) {
	for in, want := range map[string]string{"1.37.2": "v1.37.2", "v1.35.4": "v1.35.4", "1.38.0-beta.0": "v1.38.0-beta.0"} {
		got, err := kubeversion.Parse(in)
		if err != nil || string(got) != want {
			t.Errorf("%s: got %s, %v", in, got, err)
		}
	}
	for _, bad := range []string{"1.37", "latest", "2.0.0", ""} {
		if _, err := kubeversion.Parse(bad); err == nil {
			t.Errorf("%q must be refused", bad)
		}
	}
}

func TestPlanForTopology(t *testing.T) {
	top, err := topology.Load("skew-1.37")
	if err != nil {
		t.Fatal(err)
	}
	p := PlanFor(top)
	if len(p.ControlPlaneVersions) != 1 || p.ControlPlaneVersions[0] != "v1.37.2" {
		t.Errorf("control planes %v", p.ControlPlaneVersions)
	}
	if len(p.NodeVersions) != 4 || p.NodeVersions[0] != "v1.34.12" || p.NodeVersions[3] != "v1.37.2" {
		t.Errorf("node versions %v", p.NodeVersions)
	}
	if p.isControlPlane("v1.35.8") || !p.isControlPlane("v1.37.2") {
		t.Error("only the control plane's version carries control-plane binaries")
	}
	if got := fmt.Sprint(p.components("v1.37.2")); got != "[kubelet kubeadm kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy]" {
		t.Errorf("the control plane's version builds %s", got)
	}
	// The base runtime's images for every version, and one variant for runtime-v2.
	if got := fmt.Sprint(p.Kinds()); got != "[v1.34.12 v1.35.8 v1.36.5 v1.37.2 v1.37.2+containerd-2.4.2]" {
		t.Errorf("node images %s", got)
	}
}

// A control plane whose nodes run an older kubelet: its own kubelet and
// kube-proxy are never built, the older kube-proxy goes on every node, and
// the control plane's image is the variant.
func TestPlanForVariantControlPlane(t *testing.T) {
	top, err := topology.Load("next")
	if err != nil {
		t.Fatal(err)
	}
	p := PlanFor(top)
	if got := fmt.Sprint(p.NodeVersions); got != "[v1.35.4 v1.36.3 v1.37.2]" {
		t.Errorf("kubelet versions %s: the control plane's own kubelet must not be built", got)
	}
	if got := fmt.Sprint(p.Kinds()); got != "[v1.35.4 v1.36.3 v1.37.2 v1.38.0-beta.0 control plane, kubelet v1.37.2]" {
		t.Errorf("node images %s", got)
	}
	want := map[kubeversion.Version]string{
		"v1.35.4":        "[kubelet kubeadm]",
		"v1.36.3":        "[kubelet kubeadm]",
		"v1.37.2":        "[kubelet kubeadm kube-proxy]",
		"v1.38.0-beta.0": "[kubeadm kubectl kube-apiserver kube-controller-manager kube-scheduler]",
	}
	for _, v := range p.versions() {
		if got := fmt.Sprint(p.components(v)); got != want[v] {
			t.Errorf("%s builds %s, want %s", v, got, want[v])
		}
	}
	bins := map[kubeversion.Version]map[string]string{
		"v1.37.2":        {Kubelet: "/c/a/kubelet", Kubeadm: "/c/b/kubeadm", KubeProxy: "/c/c/kube-proxy"},
		"v1.38.0-beta.0": {Kubeadm: "/c/d/kubeadm", KubeAPIServer: "/c/e/kube-apiserver"},
	}
	k := p.Variants[0]
	base := nodeImageSpec{Version: "v1.37.2", Base: "b", OtherKubelets: otherKubelets(bins, "v1.37.2")}
	s := p.variantSpec(k, base, bins, []string{"/c/f/image.tar"})
	if s.Version != "v1.38.0-beta.0" || s.KubeletVersion != "v1.37.2" || !s.ControlPlane ||
		s.Binaries[Kubelet] != "/c/a/kubelet" || s.Binaries[Kubeadm] != "/c/d/kubeadm" || s.OtherKubeadms["v1.37.2"] != "/c/b/kubeadm" {
		t.Errorf("variant spec %+v", s)
	}
	if len(s.OtherKubelets) != 0 {
		t.Errorf("a control plane without its own kubelet offers none to swap in: %v", s.OtherKubelets)
	}
	if !strings.HasPrefix(s.tag(), NodeImageName+":v1.38.0-beta.0-kubelet-v1.37.2-") {
		t.Errorf("tag %s", s.tag())
	}
	if bins["v1.38.0-beta.0"][Kubelet] != "" {
		t.Error("the variant spec must not write into the control plane's binaries")
	}
	// Images built before these fields keep their keys.
	plain := nodeImageSpec{Version: "v1.37.2", Base: "b", Binaries: bins["v1.37.2"]}
	if plain.key() != Key("node", plain.Version, "b", map[string]string{Kubelet: "a", Kubeadm: "b", KubeProxy: "c"}, map[string]string{}, []string(nil), false) {
		t.Error("a node image without a variant kubelet or extra kubeadms must keep its key")
	}
}

func TestProgramNames(t *testing.T) {
	if n := Etcd("3.6.6-0"); n.Name() != "etcd" || n.Version != "v3.6.6" {
		t.Errorf("etcd %+v", n)
	}
	if n := Crictl(); n.Name() != "crictl" {
		t.Errorf("crictl name %s", n.Name())
	}
	if n := (GoProgram{Package: "example.com/x/v3"}); n.Name() != "x" {
		t.Errorf("major suffix: %s", n.Name())
	}
}

func TestCacheFillIsAtomic(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	calls := 0
	build := func(dir string) error { calls++; return nil }
	if _, hit, err := c.Fill("k", "0123456789abcdef", build); err != nil || hit {
		t.Fatalf("first fill: hit=%v err=%v", hit, err)
	}
	if _, hit, err := c.Fill("k", "0123456789abcdef", build); err != nil || !hit || calls != 1 {
		t.Fatalf("second fill must be a hit without building: hit=%v calls=%d err=%v", hit, calls, err)
	}
	failing := func(dir string) error { return errTest }
	if _, _, err := c.Fill("k", "fedcba9876543210", failing); err == nil || c.Has("k", "fedcba9876543210") {
		t.Fatal("a failed build must leave no finished entry")
	}
}

type testErr string

func (e testErr) Error() string { return string(e) }

const errTest = testErr("boom")

func TestUpstreamRefusesUnpinnedVersions(t *testing.T) {
	b := &Builder{}
	_, err := b.PullUpstream(t.Context(), Plan{NodeVersions: []kubeversion.Version{"v1.34.4"}, ControlPlaneVersions: []kubeversion.Version{"v1.37.2"}})
	if err == nil || !strings.Contains(err.Error(), "no digest-pinned kindest/node image is known for v1.34.4, v1.37.2") {
		t.Fatalf("got %v", err)
	}
	for v, ref := range upstreamImages {
		if !strings.Contains(ref, "@sha256:") || !strings.Contains(ref, string(v)) {
			t.Errorf("%s: %s is not pinned by digest to its version", v, ref)
		}
	}
}

func TestUpstreamTableCarriesKindsDefault(t *testing.T) {
	found := false
	for _, ref := range upstreamImages {
		found = found || ref == kinddefaults.Image
	}
	if !found {
		t.Errorf("kind %s's default image %s is not in the upstream table", kindVersion(), kinddefaults.Image)
	}
}

func TestRefusedModulesNamesWhatTheProxyRefuses(t *testing.T) {
	out := `go: ndfq.local/build/k8s.io_kubernetes imports
	k8s.io/kubernetes/cmd/kube-proxy/app imports
	sigs.k8s.io/iptables-wrappers/pkg/iptables: sigs.k8s.io/iptables-wrappers@v1.0.0: reading https://proxy.golang.org/sigs.k8s.io/iptables-wrappers/@v/v1.0.0.zip: 403 Forbidden
	sigs.k8s.io/iptables-wrappers/pkg/iptables/testing: sigs.k8s.io/iptables-wrappers@v1.0.0: reading https://proxy.golang.org/sigs.k8s.io/iptables-wrappers/@v/v1.0.0.zip: 403 Forbidden`
	if got := refusedModules(out); !slices.Equal(got, []string{"sigs.k8s.io/iptables-wrappers@v1.0.0"}) {
		t.Errorf("got %v", got)
	}
}

// Every runtime a topology may name has a build, and every binary of a
// build has a place in the node.
func TestEveryRuntimeHasABuild(t *testing.T) {
	for _, r := range fixtures.Runtimes {
		if r.Name == fixtures.DefaultRuntime {
			continue // the base image's own
		}
		rb, err := runtimeBuildFor(r.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range rb.programs {
			if rb.dest[p.Name()] == "" {
				t.Errorf("runtime %s: %s is built but put nowhere", r.Name, p.Name())
			}
		}
	}
	if _, err := runtimeBuildFor("cri-o-1.30"); err == nil || !strings.Contains(err.Error(), "builds exist for containerd-2.4.2") {
		t.Errorf("an unknown runtime: %v", err)
	}
}
