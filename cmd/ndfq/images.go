package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ndfq/ndfq/internal/kubeversion"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/progress"
)

func imagesCommand() *cobra.Command {
	var topologies, versions, controlPlanes []string
	var cacheDir, source, k8sVersion string
	build := &cobra.Command{
		Use:   "build",
		Short: "Build node images for topologies or versions, reusing the content-addressed cache",
		Example: `  ndfq images build --topology skew-1.37
  ndfq images build --versions 1.34.4,1.35.4,1.36.3,1.37.2 --control-planes 1.37.2`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			plan, err := imagePlan(topologies, k8sVersion, versions, controlPlanes)
			if err != nil {
				return err
			}
			log := progress.New(cmd.ErrOrStderr())
			b := &nodeimage.Builder{Cache: nodeimage.Cache{Dir: cacheDir}, Log: log}
			var res nodeimage.Result
			switch source {
			case nodeimage.SourceOffline:
				res, err = b.Build(cmd.Context(), plan)
			case nodeimage.SourceUpstream:
				res, err = b.PullUpstream(cmd.Context(), plan)
			default:
				err = fmt.Errorf("--source %q: want %s or %s", source, nodeimage.SourceOffline, nodeimage.SourceUpstream)
			}
			if err != nil {
				return err
			}
			for _, k := range plan.Kinds() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", k, res[k])
			}
			return nil
		},
	}
	build.Flags().StringSliceVar(&topologies, "topology", nil, "topology name or file whose versions to build (repeatable)")
	build.Flags().StringVar(&k8sVersion, "kubernetes-version", os.Getenv("KUBERNETES_VERSION"), "replace the topologies' control-plane version, e.g. 1.38.0-beta.0 ($KUBERNETES_VERSION)")
	build.Flags().StringSliceVar(&versions, "versions", nil, "kubelet versions to build node images for")
	build.Flags().StringSliceVar(&controlPlanes, "control-planes", nil, "versions that also run a control plane (default: the newest of --versions)")
	build.Flags().StringVar(&cacheDir, "cache", nodeimage.DefaultCacheDir(), "build cache folder ($NDFQ_CACHE)")
	build.Flags().StringVar(&source, "source", nodeimage.SourceOffline, "offline: build here without a registry; upstream: pull kind's digest-pinned kindest/node images (needs a registry; refuse cgroup v1 hosts from 1.35 on)")
	var bin, tag, out string
	probeImage := &cobra.Command{
		Use:   "probe-image",
		Short: "Write an image archive of a static ndfq binary, for the in-cluster probe Job (config/job/)",
		Example: `  CGO_ENABLED=0 go build -o bin/static/ndfq ./cmd/ndfq
  ndfq images probe-image --binary bin/static/ndfq --output bin/ndfq-image.tar
  kind load image-archive bin/ndfq-image.tar --name my-cluster`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if bin == "" || out == "" {
				return fmt.Errorf("--binary and --output are required")
			}
			if err := nodeimage.WriteProbeImage(out, tag, bin); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", tag, out)
			return nil
		},
	}
	probeImage.Flags().StringVar(&bin, "binary", "", "a statically linked ndfq binary (CGO_ENABLED=0)")
	probeImage.Flags().StringVar(&tag, "tag", nodeimage.ProbeImageTag, "the image's tag (config/job/ runs "+nodeimage.ProbeImageTag+")")
	probeImage.Flags().StringVar(&out, "output", "", "the image archive to write (docker-archive, as `kind load image-archive` and `ctr images import` read)")
	return group("images", "Build kind node images offline, and ndfq's own image", build, probeImage)
}

// imagePlan merges topologies and explicit versions into one build plan,
// refusing bad versions before anything is built.
func imagePlan(topologies []string, k8sVersion string, versions, controlPlanes []string) (nodeimage.Plan, error) {
	var p nodeimage.Plan
	parse := func(list []string, into *[]kubeversion.Version) error {
		for _, s := range list {
			v, err := kubeversion.Parse(strings.TrimSpace(s))
			if err != nil {
				return err
			}
			*into = append(*into, v)
		}
		return nil
	}
	for _, name := range topologies {
		t, err := topology.LoadWith(name, k8sVersion)
		if err != nil {
			return p, err
		}
		tp := nodeimage.PlanFor(t)
		p.NodeVersions = append(p.NodeVersions, tp.NodeVersions...)
		p.ControlPlaneVersions = append(p.ControlPlaneVersions, tp.ControlPlaneVersions...)
		p.Variants = append(p.Variants, tp.Variants...)
		p.KubeProxyVersions = append(p.KubeProxyVersions, tp.KubeProxyVersions...)
		p.LoadBalancer = p.LoadBalancer || tp.LoadBalancer
	}
	if err := parse(versions, &p.NodeVersions); err != nil {
		return p, err
	}
	var flagged []kubeversion.Version
	if err := parse(controlPlanes, &flagged); err != nil {
		return p, err
	}
	if len(p.ControlPlaneVersions)+len(flagged) == 0 && len(p.NodeVersions) > 0 {
		newest := p.Normalize().NodeVersions
		flagged = newest[len(newest)-1:]
	}
	// A control plane named here runs kubeadm's own kube-proxy.
	p.ControlPlaneVersions = append(p.ControlPlaneVersions, flagged...)
	if len(p.KubeProxyVersions) > 0 {
		p.KubeProxyVersions = append(p.KubeProxyVersions, flagged...)
	}
	if len(p.NodeVersions) == 0 {
		return p, fmt.Errorf("nothing to build: give --topology or --versions")
	}
	return p.Normalize(), nil
}
