package nodeimage

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/ndfq/ndfq/internal/kubeversion"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/sh"
)

// Plan is what one build must produce: a node image for every kubelet
// version, where every control-plane version can run the control plane
// and every node can run the plan's kube-proxy and CoreDNS.
type Plan struct {
	NodeVersions         []kubeversion.Version
	ControlPlaneVersions []kubeversion.Version
	// Variants are node kinds beside the base images: a kubelet version on
	// another runtime, or a control plane with an older kubelet (its
	// ControlPlane set), whose own kubelet need not be built.
	Variants []topology.NodeKind
	// KubeProxyVersions are the kube-proxy images every node carries; none
	// means the control planes' own.
	KubeProxyVersions []kubeversion.Version
	// LoadBalancer is kind's image in front of several control-plane nodes.
	LoadBalancer bool
}

func uniqVersions(vs []kubeversion.Version) []kubeversion.Version {
	out := slices.Clone(vs)
	slices.SortFunc(out, kubeversion.Compare)
	return slices.Compact(out)
}

// Normalize sorts and dedupes, and makes every control-plane version a
// node version unless a variant gives it another kubelet.
func (p Plan) Normalize() Plan {
	nodes := slices.Clone(p.NodeVersions)
	var variants []topology.NodeKind
	withOtherKubelet := map[kubeversion.Version]bool{}
	for _, k := range p.Variants {
		if (k.Runtime != fixtures.DefaultRuntime || k.ControlPlane != "") && !slices.Contains(variants, k) {
			variants = append(variants, k)
			nodes = append(nodes, k.Version)
		}
		if k.ControlPlane != "" {
			withOtherKubelet[k.ControlPlane] = true
		}
	}
	for _, v := range p.ControlPlaneVersions {
		if !withOtherKubelet[v] {
			nodes = append(nodes, v)
		}
	}
	sort.Slice(variants, func(i, j int) bool { return variants[i].String() < variants[j].String() })
	proxies := p.KubeProxyVersions
	if len(proxies) == 0 {
		proxies = p.ControlPlaneVersions
	}
	return Plan{
		NodeVersions: uniqVersions(nodes), ControlPlaneVersions: uniqVersions(p.ControlPlaneVersions),
		Variants: variants, KubeProxyVersions: uniqVersions(proxies), LoadBalancer: p.LoadBalancer,
	}
}

// Kinds are every node image the plan makes: each version on the base
// runtime, then the variants.
func (p Plan) Kinds() []topology.NodeKind {
	p = p.Normalize()
	var out []topology.NodeKind
	for _, v := range p.NodeVersions {
		out = append(out, topology.NodeKind{Version: v, Runtime: fixtures.DefaultRuntime})
	}
	return append(out, p.Variants...)
}

// components are the Kubernetes binaries built of version v: a kubelet
// version's node components, a control plane's, a kube-proxy's.
func (p Plan) components(v kubeversion.Version) []string {
	var want []string
	if slices.Contains(p.NodeVersions, v) {
		want = append(want, NodeComponents...)
	}
	if p.isControlPlane(v) {
		want = append(want, Kubeadm, Kubectl, KubeAPIServer, KubeControllerManager, KubeScheduler)
	}
	if slices.Contains(p.KubeProxyVersions, v) {
		want = append(want, Kubeadm, KubeProxy)
	}
	// One order for every plan: the wrapper module's key is the set.
	var out []string
	for _, c := range append(append([]string{}, NodeComponents...), ControlPlaneComponents...) {
		if slices.Contains(want, c) {
			out = append(out, c)
		}
	}
	return out
}

// versions are every version something is built of.
func (p Plan) versions() []kubeversion.Version {
	return uniqVersions(slices.Concat(p.NodeVersions, p.ControlPlaneVersions, p.KubeProxyVersions))
}

func (p Plan) isControlPlane(v kubeversion.Version) bool {
	return slices.Contains(p.ControlPlaneVersions, v)
}

// TestImage is the probe pods' image, present on every node.
const TestImage = fixtures.ToolboxImage

// NodeImageName is the repository of node images; the tag is vX.Y.Z-<key>.
const NodeImageName = "ndfq/node"

// Result maps each node kind (kubelet version and runtime) to its node image.
type Result map[topology.NodeKind]string

// Build produces every image of the plan, reusing whatever is cached. The
// base root file system (debootstrap, mostly waiting on the mirror and the
// disk) is made beside the Kubernetes compiles, which hold every core one
// release at a time; the images that need both follow. Its closing line
// names the critical path: which step waited on which.
func (b *Builder) Build(ctx context.Context, p Plan) (Result, error) {
	p = p.Normalize()
	if len(p.ControlPlaneVersions) == 0 {
		return nil, fmt.Errorf("image plan has no control-plane version")
	}
	kindDir, err := KindModuleDir(ctx)
	if err != nil {
		return nil, err
	}
	var st stages
	var base, rootfsTar string
	bins := map[kubeversion.Version]map[string]string{}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		var after []string
		if p.LoadBalancer {
			if err := st.run("load balancer", nil, func() error { return b.BuildLoadBalancer(gctx) }); err != nil {
				return fmt.Errorf("load balancer image: %w", err)
			}
			after = []string{"load balancer"}
		}
		var crictl map[string]string
		if err := st.run("crictl", after, func() (err error) { crictl, err = b.BuildPrograms(gctx, []GoProgram{Crictl()}); return err }); err != nil {
			return err
		}
		return st.run("base", []string{"crictl"}, func() (err error) {
			base, rootfsTar, err = b.BuildBase(gctx, BaseSpec{
				Suite: "bookworm", Mirror: debianMirror(), Packages: DefaultBasePackages,
				KindDir: kindDir, Crictl: crictl["crictl"],
			})
			return err
		})
	})
	compile := func(v kubeversion.Version) string { return "kubernetes " + v.String() }
	versions := p.versions()
	g.Go(func() error {
		var after []string
		for _, v := range versions {
			name := compile(v)
			var paths map[string]string
			if err := st.run(name, after, func() (err error) {
				paths, err = b.BuildPrograms(gctx, KubernetesPrograms(v, p.components(v)))
				return err
			}); err != nil {
				return err
			}
			bins[v], after = paths, []string{name}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	// The rest runs one step after another, each after the one before.
	prev := []string{"base"}
	if len(versions) > 0 {
		prev = append(prev, compile(versions[len(versions)-1]))
	}
	step := func(name string, f func() error) error {
		err := st.run(name, prev, f)
		prev = []string{name}
		return err
	}
	// Images every node carries: the plan's kube-proxy, the control planes'
	// CoreDNS, every pause tag, and the suites' test image.
	// What each control plane's and kube-proxy's kubeadm lists, asked once.
	refsOf := map[kubeversion.Version]map[string]string{}
	for _, v := range uniqVersions(slices.Concat(p.ControlPlaneVersions, p.KubeProxyVersions)) {
		if err := step("kubeadm images "+v.String(), func() (err error) { refsOf[v], err = kubeadmImages(ctx, bins[v][Kubeadm], v); return err }); err != nil {
			return nil, err
		}
	}
	var shared []string
	if err := step("shared images", func() (err error) { shared, err = b.sharedImages(ctx, p, bins, refsOf, rootfsTar, kindDir); return err }); err != nil {
		return nil, err
	}
	cpImages := map[kubeversion.Version][]string{}
	for _, v := range p.ControlPlaneVersions {
		if err := step("control-plane images "+v.String(), func() (err error) { cpImages[v], err = b.controlPlaneImages(ctx, refsOf[v], bins[v]); return err }); err != nil {
			return nil, err
		}
	}
	out := Result{}
	for _, v := range p.NodeVersions {
		archives := append(slices.Clone(shared), cpImages[v]...)
		binaries := bins[v]
		if !p.isControlPlane(v) {
			binaries = only(binaries, NodeComponents) // not a kube-proxy built for the others
		}
		spec := nodeImageSpec{
			Version: v, Base: base, Binaries: binaries, OtherKubelets: otherKubelets(bins, v),
			Archives: archives, ControlPlane: p.isControlPlane(v),
		}
		if spec.ControlPlane {
			spec.OtherKubeadms = p.kubeProxyKubeadms(bins, v)
		}
		kind := topology.NodeKind{Version: v, Runtime: fixtures.DefaultRuntime}
		if err := step("node image "+kind.String(), func() (err error) { out[kind], err = b.nodeImage(ctx, spec); return err }); err != nil {
			return nil, err
		}
		for _, k := range p.Variants {
			if k.Version != v {
				continue
			}
			if k.ControlPlane != "" {
				if err := step("node image "+k.String(), func() (err error) {
					out[k], err = b.nodeImage(ctx, p.variantSpec(k, spec, bins, append(slices.Clone(shared), cpImages[k.ControlPlane]...)))
					return err
				}); err != nil {
					return nil, err
				}
				continue
			}
			spec.Runtime = k.Runtime
			if err := step("runtime "+k.Runtime, func() (err error) { spec.RuntimeFiles, err = b.runtimeFiles(ctx, k.Runtime); return err }); err != nil {
				return nil, err
			}
			if err := step("node image "+k.String(), func() (err error) { out[k], err = b.nodeImage(ctx, spec); return err }); err != nil {
				return nil, err
			}
		}
	}
	b.Log.Printf("%s", st.summary())
	return out, nil
}

// runtimeFiles builds a runtime's programs and says where each goes.
func (b *Builder) runtimeFiles(ctx context.Context, name string) (map[string]string, error) {
	rb, err := runtimeBuildFor(name)
	if err != nil {
		return nil, err
	}
	bins, err := b.BuildPrograms(ctx, rb.programs)
	if err != nil {
		return nil, fmt.Errorf("runtime %s: %w", name, err)
	}
	return rb.place(bins), nil
}

// variantSpec is a control plane's image with an older kubelet, made
// from that kubelet's base image spec: the control plane's binaries and
// kubeadm, the kubelet of k.Version, and the control plane's images.
func (p Plan) variantSpec(k topology.NodeKind, kubelet nodeImageSpec, bins map[kubeversion.Version]map[string]string, archives []string) nodeImageSpec {
	binaries := maps.Clone(bins[k.ControlPlane])
	binaries[Kubelet] = bins[k.Version][Kubelet]
	return nodeImageSpec{
		Version: k.ControlPlane, KubeletVersion: k.Version, Base: kubelet.Base, Binaries: binaries,
		OtherKubelets: kubelet.OtherKubelets, OtherKubeadms: p.kubeProxyKubeadms(bins, k.ControlPlane),
		Archives: archives, ControlPlane: true,
	}
}

// kubeProxyKubeadms are, on a control plane's image, the kubeadms of the
// kube-proxy versions that are not its own: ndfq runs their addon phase.
func (p Plan) kubeProxyKubeadms(bins map[kubeversion.Version]map[string]string, cp kubeversion.Version) map[kubeversion.Version]string {
	out := map[kubeversion.Version]string{}
	for _, v := range p.KubeProxyVersions {
		if v != cp {
			out[v] = bins[v][Kubeadm]
		}
	}
	return out
}

func only(bins map[string]string, names []string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		out[n] = bins[n]
	}
	return out
}

// otherKubelets are the kubelets of every version but v that has one.
func otherKubelets(bins map[kubeversion.Version]map[string]string, v kubeversion.Version) map[kubeversion.Version]string {
	out := map[kubeversion.Version]string{}
	for o, paths := range bins {
		if k, ok := paths[Kubelet]; ok && o != v {
			out[o] = k
		}
	}
	return out
}

func debianMirror() string {
	if m := os.Getenv("NDFQ_DEBIAN_MIRROR"); m != "" {
		return m
	}
	return "http://deb.debian.org/debian"
}

// KindModuleDir finds the kind module ndfq was built with in the module
// cache (downloading it if needed); its images/base/files are the node files.
func KindModuleDir(ctx context.Context) (string, error) {
	out, err := sh.Output(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/kind@"+kindVersion())
	if err != nil {
		return "", fmt.Errorf("locate the kind module: %w", err)
	}
	dir := jsonField(out, "Dir")
	if dir == "" {
		return "", fmt.Errorf("locate the kind module: no Dir in %s", out)
	}
	return dir, nil
}

// kubeadmImages asks a control-plane version's own kubeadm which images it
// runs, so tags are never guessed: component -> full reference.
func kubeadmImages(ctx context.Context, kubeadm string, v kubeversion.Version) (map[string]string, error) {
	out, err := sh.Output(ctx, kubeadm, "config", "images", "list", "--kubernetes-version", string(v))
	if err != nil {
		return nil, err
	}
	imgs := map[string]string{}
	for _, line := range strings.Fields(string(out)) {
		repo := line[:strings.LastIndex(line, ":")]
		imgs[filepath.Base(repo)] = line
	}
	for _, want := range []string{"kube-apiserver", "kube-proxy", "etcd", "coredns", "pause"} {
		if imgs[want] == "" {
			return nil, fmt.Errorf("kubeadm %s lists no %s image: %s", v, want, out)
		}
	}
	return imgs, nil
}

func tagOf(ref string) string { return ref[strings.LastIndex(ref, ":")+1:] }

func lookPath(name string) bool { _, err := exec.LookPath(name); return err == nil }

// PlanFor is the plan that a topology needs.
func PlanFor(t *topology.Topology) Plan {
	var p Plan
	p.NodeVersions = t.Versions()
	p.ControlPlaneVersions = []kubeversion.Version{t.ControlPlaneVersion()}
	p.Variants = t.Kinds()
	p.KubeProxyVersions = []kubeversion.Version{t.KubeProxyVersion()}
	p.LoadBalancer = t.ControlPlaneCount() > 1
	return p.Normalize()
}

// ReleaseBins are the cache entries (under the cache's bin/) of the
// Kubernetes binaries one release builds for a plan: a CI job restores and
// saves each release on its own, so topologies that share a minor share its
// builds (the costly part of a cold run).
type ReleaseBins struct {
	Release kubeversion.Version
	Keys    []string // sorted
}

// BinsByRelease lists the plan's ReleaseBins, oldest release first, with
// the keys BuildPrograms fills.
func (p Plan) BinsByRelease() []ReleaseBins {
	p = p.Normalize()
	var out []ReleaseBins
	for _, v := range p.versions() {
		var keys []string
		for _, prog := range KubernetesPrograms(v, p.components(v)) {
			keys = append(keys, prog.key())
		}
		slices.Sort(keys)
		out = append(out, ReleaseBins{Release: v, Keys: keys})
	}
	return out
}
