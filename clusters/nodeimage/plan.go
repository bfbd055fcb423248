package nodeimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ndfq/ndfq/internal/kubeversion"

	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/fixtures"
	"github.com/ndfq/ndfq/internal/sh"
)

// Plan is what one build must produce: a node image for every kubelet
// version, where every control-plane version can run the control plane
// and every node can run the control planes' kube-proxy and CoreDNS.
type Plan struct {
	NodeVersions         []kubeversion.Version
	ControlPlaneVersions []kubeversion.Version
	// Variants are kubelet versions that also need an image with another
	// runtime than the base image's (topology pools that name one).
	Variants []topology.NodeKind
	// LoadBalancer is kind's image in front of several control-plane nodes.
	LoadBalancer bool
}

// Normalize sorts and dedupes, and makes every control-plane version a node version.
func (p Plan) Normalize() Plan {
	uniq := func(vs []kubeversion.Version) []kubeversion.Version {
		seen := map[kubeversion.Version]bool{}
		var out []kubeversion.Version
		for _, v := range vs {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		sort.Slice(out, func(i, j int) bool { return kubeversion.Compare(out[i], out[j]) < 0 })
		return out
	}
	nodes := append(append([]kubeversion.Version{}, p.NodeVersions...), p.ControlPlaneVersions...)
	var variants []topology.NodeKind
	for _, k := range p.Variants {
		if k.Runtime != fixtures.DefaultRuntime && !slices.Contains(variants, k) {
			variants = append(variants, k)
			nodes = append(nodes, k.Version)
		}
	}
	sort.Slice(variants, func(i, j int) bool { return variants[i].String() < variants[j].String() })
	return Plan{NodeVersions: uniq(nodes), ControlPlaneVersions: uniq(p.ControlPlaneVersions), Variants: variants, LoadBalancer: p.LoadBalancer}
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

func (p Plan) isControlPlane(v kubeversion.Version) bool {
	return slices.Contains(p.ControlPlaneVersions, v)
}

// TestImage is the probe pods' image, present on every node.
const TestImage = fixtures.ProbeImage

// NodeImageName is the repository of node images; the tag is vX.Y.Z-<key>.
const NodeImageName = "ndfq/node"

// Result maps each node kind (kubelet version and runtime) to its node image.
type Result map[topology.NodeKind]string

// Build produces every image of the plan, reusing whatever is cached.
func (b *Builder) Build(ctx context.Context, p Plan) (Result, error) {
	p = p.Normalize()
	if len(p.ControlPlaneVersions) == 0 {
		return nil, fmt.Errorf("image plan has no control-plane version")
	}
	if p.LoadBalancer {
		if err := b.BuildLoadBalancer(ctx); err != nil {
			return nil, fmt.Errorf("load balancer image: %w", err)
		}
	}
	kindDir, err := KindModuleDir(ctx)
	if err != nil {
		return nil, err
	}
	crictl, err := b.BuildPrograms(ctx, []GoProgram{Crictl()})
	if err != nil {
		return nil, err
	}
	base, rootfsTar, err := b.BuildBase(ctx, BaseSpec{
		Suite: "bookworm", Mirror: debianMirror(), Packages: DefaultBasePackages,
		KindDir: kindDir, Crictl: crictl["crictl"],
	})
	if err != nil {
		return nil, err
	}
	bins := map[kubeversion.Version]map[string]string{}
	for _, v := range p.NodeVersions {
		comps := append([]string{}, NodeComponents...)
		if p.isControlPlane(v) {
			comps = append(comps, ControlPlaneComponents...)
		}
		paths, err := b.BuildPrograms(ctx, KubernetesPrograms(v, comps))
		if err != nil {
			return nil, err
		}
		bins[v] = paths
	}
	// Images every node carries: the control planes' kube-proxy and CoreDNS,
	// every pause tag, and the suites' test image.
	shared, err := b.sharedImages(ctx, p, bins, rootfsTar, kindDir)
	if err != nil {
		return nil, err
	}
	out := Result{}
	for _, v := range p.NodeVersions {
		archives := append([]string{}, shared...)
		if p.isControlPlane(v) {
			cp, err := b.controlPlaneImages(ctx, v, bins[v])
			if err != nil {
				return nil, err
			}
			archives = append(archives, cp...)
		}
		spec := nodeImageSpec{
			Version: v, Base: base, Binaries: bins[v], OtherKubelets: otherKubelets(bins, v),
			Archives: archives, ControlPlane: p.isControlPlane(v),
		}
		img, err := b.nodeImage(ctx, spec)
		if err != nil {
			return nil, err
		}
		out[topology.NodeKind{Version: v, Runtime: fixtures.DefaultRuntime}] = img
		for _, k := range p.Variants {
			if k.Version != v {
				continue
			}
			spec.Runtime = k.Runtime
			if spec.RuntimeFiles, err = b.runtimeFiles(ctx, k.Runtime); err != nil {
				return nil, err
			}
			if out[k], err = b.nodeImage(ctx, spec); err != nil {
				return nil, err
			}
		}
	}
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

func otherKubelets(bins map[kubeversion.Version]map[string]string, v kubeversion.Version) map[kubeversion.Version]string {
	out := map[kubeversion.Version]string{}
	for o, paths := range bins {
		if o != v {
			out[o] = paths[Kubelet]
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
	p.LoadBalancer = t.ControlPlaneCount() > 1
	return p.Normalize()
}
