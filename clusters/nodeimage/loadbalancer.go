package nodeimage

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/ndfq/ndfq/internal/sh"
)

// LoadBalancerImage is the image kind v0.33.0 runs in front of two or more
// control-plane nodes (its internal loadbalancer.Image, checked against the
// kind module by TestLoadBalancerImageIsKinds). kind pulls it unless an
// image of that name is present, and nothing can be pulled here.
const LoadBalancerImage = "docker.io/envoyproxy/envoy:v1.36.2"

// loadBalancerLabel marks ndfq's stand-in with its content key, so a real
// Envoy image of that name is told apart and never replaced.
const loadBalancerLabel = "ndfq.io/load-balancer"

// loadBalancerPackages are Debian's share of the stand-in: haproxy, as
// kind's own load balancer was before it moved to Envoy.
var loadBalancerPackages = []string{"haproxy"}

// envoyStandIn answers kind's `envoy -c FILE` with haproxy over the
// endpoints kind writes into Envoy's CDS file.
//
//go:embed loadbalancer/envoy
var envoyStandIn []byte

// BuildLoadBalancer makes kind's load-balancer image from Debian's haproxy
// (its own debootstrap, cached) and the stand-in on top, unless an image of
// that name is there: ndfq's own of the same key (cached) or anybody
// else's (a real Envoy, used as it is).
func (b *Builder) BuildLoadBalancer(ctx context.Context) error {
	rootfsKey := Key("load-balancer-rootfs", "bookworm", debianMirror(), loadBalancerPackages)
	key := Key("load-balancer", rootfsKey, string(envoyStandIn))
	tag := key[:16]
	if label, present := imageLabel(ctx, LoadBalancerImage, loadBalancerLabel); present {
		switch label {
		case tag:
			b.Log.Printf("load balancer image %s: cached", LoadBalancerImage)
			return nil
		case "":
			b.Log.Printf("load balancer image %s: present and not ndfq's; kind uses it as it is", LoadBalancerImage)
			return nil
		}
	}
	dir, _, err := b.Cache.Fill("lb-rootfs", rootfsKey, func(out string) error {
		done := b.Log.Step("load balancer root file system (debootstrap bookworm + haproxy)")
		err := makeLoadBalancerRootfs(ctx, out)
		done(err)
		return err
	})
	if err != nil {
		return err
	}
	archive, err := b.archive("load balancer (haproxy behind kind's Envoy contract)", key, func() (imageSpec, error) {
		tmp, err := os.MkdirTemp("", "ndfq-lb-")
		if err != nil {
			return imageSpec{}, err
		}
		defer os.RemoveAll(tmp)
		standIn := filepath.Join(tmp, "envoy")
		if err := os.WriteFile(standIn, envoyStandIn, 0o755); err != nil {
			return imageSpec{}, err
		}
		debian, err := tarball.LayerFromFile(filepath.Join(dir, "rootfs.tar"))
		if err != nil {
			return imageSpec{}, err
		}
		top, err := layerFromFiles([]fileEntry{{Path: "/usr/local/bin/envoy", Src: standIn, Mode: 0o755}})
		if err != nil {
			return imageSpec{}, err
		}
		return imageSpec{Tags: []string{LoadBalancerImage}, Layers: []v1.Layer{debian, top}, Labels: map[string]string{loadBalancerLabel: tag}}, nil
	})
	if err != nil {
		return err
	}
	done := b.Log.Step("load %s into docker", LoadBalancerImage)
	_, err = sh.Output(ctx, "docker", "load", "-i", archive)
	done(err)
	return err
}

func makeLoadBalancerRootfs(ctx context.Context, out string) error {
	rootfs := filepath.Join(out, "rootfs")
	defer os.RemoveAll(rootfs)
	for _, tool := range []string{"debootstrap", "tar"} {
		if !lookPath(tool) {
			return fmt.Errorf("%s is not installed: run `ndfq host setup` (it installs the build tools on Debian) or install it", tool)
		}
	}
	if err := sh.Run(ctx, "debootstrap", "--variant=minbase", "--include="+strings.Join(loadBalancerPackages, ","), "bookworm", rootfs, debianMirror()); err != nil {
		return err
	}
	if err := removeGlobs(rootfs, packageLeftovers); err != nil {
		return err
	}
	return sh.Run(ctx, "tar", "--numeric-owner", "-C", rootfs, "-cf", filepath.Join(out, "rootfs.tar"), ".")
}

// imageLabel reads one label of a local image; present is false when
// there is no image of that name.
func imageLabel(ctx context.Context, image, label string) (value string, present bool) {
	out, err := sh.Output(ctx, "docker", "image", "inspect", "--format", fmt.Sprintf("{{index .Config.Labels %q}}", label), image)
	if err != nil {
		return "", false
	}
	v := strings.TrimSpace(string(out))
	if v == "<no value>" {
		v = ""
	}
	return v, true
}
