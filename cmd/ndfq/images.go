package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/ndfq/ndfq/internal/kubeversion"

	"github.com/spf13/cobra"

	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/buildinfo"
	"github.com/ndfq/ndfq/internal/progress"
	"github.com/ndfq/ndfq/internal/release"
)

func imagesCommand() *cobra.Command {
	var topologies, versions, controlPlanes []string
	var cacheDir, source, k8sVersion string
	build := &cobra.Command{
		Use:   "build",
		Short: "Build node images for topologies or versions, reusing the content-addressed cache",
		Example: `  ndfq images build --topology skew-1.37
  ndfq images build --versions 1.34.12,1.35.8,1.36.5,1.37.2 --control-planes 1.37.2`,
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
	var bin, out, repo, jobTemplate, jobOut string
	probeImage := &cobra.Command{
		Use:   "probe-image",
		Short: "Write ndfq's own image (an OCI archive of a static binary) and the probe Job that runs it by digest",
		Example: `  make probe-image   # bin/ndfq-image.tar and bin/probe-job.yaml
  ndfq images probe-image --binary bin/ndfq --output bin/ndfq-image.tar --job-manifest bin/probe-job.yaml
  kind load image-archive bin/ndfq-image.tar --name my-cluster && kubectl apply -f bin/probe-job.yaml`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if bin == "" || out == "" {
				return fmt.Errorf("--binary and --output are required")
			}
			info := buildinfo.Get()
			host := release.Platform{OS: "linux", Arch: runtime.GOARCH}
			idx, err := release.ImageIndex(release.ImageInput{Version: info.Version, Commit: info.Commit,
				Binaries: map[release.Platform]string{host: bin}, Created: time.Unix(0, 0)})
			if err != nil {
				return err
			}
			ref, err := release.WriteImageArchive(out, idx, repo, info.Version)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s\t%s\n", ref, out)
			if jobOut == "" {
				return nil
			}
			tmpl, err := os.ReadFile(jobTemplate)
			if err != nil {
				return fmt.Errorf("--job-template: %w", err)
			}
			job, err := release.JobManifest(tmpl, ref, info.Version)
			if err == nil {
				err = os.WriteFile(jobOut, job, 0o644)
			}
			if err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "job\t%s\n", jobOut)
			}
			return err
		},
	}
	probeImage.Flags().StringVar(&bin, "binary", "", "a statically linked linux ndfq binary (CGO_ENABLED=0) for this machine's architecture")
	probeImage.Flags().StringVar(&out, "output", "", "the OCI image archive to write (kind load image-archive and ctr images import read it)")
	probeImage.Flags().StringVar(&repo, "repo", release.DefaultImageRepo, "the repository the image is named in (repo:version and repo@digest)")
	probeImage.Flags().StringVar(&jobOut, "job-manifest", "", "also write the probe Job running the image by digest here")
	probeImage.Flags().StringVar(&jobTemplate, "job-template", "config/job/probe-job.yaml", "the Job manifest whose placeholder image is replaced")
	var from, to string
	push := &cobra.Command{
		Use:   "push",
		Short: "Push ndfq's image from its OCI archive to a registry, and read it back by digest",
		Example: `  docker login ghcr.io   # or any credential helper: the push uses docker's credentials
  ndfq images push --from _dist/ndfq-image_v0.1.0.oci.tar --to ghcr.io/my-org/ndfq`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" || to == "" {
				return fmt.Errorf("--from and --to are required")
			}
			idx, done, err := release.ReadImageArchive(from)
			if err != nil {
				return err
			}
			defer done()
			ref, err := release.Push(cmd.Context(), idx, to)
			if err != nil {
				return err
			}
			if _, err := release.PullIndex(cmd.Context(), ref); err != nil {
				return fmt.Errorf("pushed, but reading it back: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), ref)
			return nil
		},
	}
	push.Flags().StringVar(&from, "from", "", "the image archive of a release (_dist/ndfq-image_VERSION.oci.tar) or of make probe-image")
	push.Flags().StringVar(&to, "to", "", "the repository to push to, tagged with the image's version (or repo:tag)")
	var promCache string
	prometheus := &cobra.Command{
		Use:   "prometheus",
		Short: "Build (or reuse) the Prometheus image the e2e cluster runs, from " + nodeimage.Prometheus.Module + " " + nodeimage.Prometheus.Version + "'s source; prints the archive's path",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := &nodeimage.Builder{Cache: nodeimage.Cache{Dir: promCache}, Log: progress.New(cmd.ErrOrStderr())}
			archive, err := b.PrometheusImage(cmd.Context())
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), archive)
			}
			return err
		},
	}
	prometheus.Flags().StringVar(&promCache, "cache", nodeimage.DefaultCacheDir(), "build cache folder ($NDFQ_CACHE)")
	return group("images", "Build kind node images offline, and ndfq's own image", build, probeImage, push, prometheus, cachePlanCommand())
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
