package nodeimage

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"

	"github.com/ndfq/ndfq/internal/kubeversion"

	"github.com/BurntSushi/toml"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func jsonField(doc []byte, field string) string {
	var m map[string]any
	if json.Unmarshal(doc, &m) != nil {
		return ""
	}
	s, _ := m[field].(string)
	return s
}

// kindVersion is the kind module this binary was built with.
func kindVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "sigs.k8s.io/kind" {
				return d.Version
			}
		}
	}
	return "v0.33.0"
}

// sandboxImage is the pause image kind's containerd configuration pins.
func sandboxImage(kindDir string) (string, error) {
	var cfg struct {
		Plugins map[string]struct {
			SandboxImage string `toml:"sandbox_image"`
		} `toml:"plugins"`
	}
	if _, err := toml.DecodeFile(filepath.Join(kindDir, "images/base/files/etc/containerd/config.toml"), &cfg); err != nil {
		return "", err
	}
	if s := cfg.Plugins["io.containerd.grpc.v1.cri"].SandboxImage; s != "" {
		return s, nil
	}
	return "", fmt.Errorf("kind's containerd config pins no sandbox_image")
}

// archive builds (or reuses) one image archive, keyed by its inputs.
func (b *Builder) archive(what string, key string, spec func() (imageSpec, error)) (string, error) {
	dir, hit, err := b.Cache.Fill("image", key, func(out string) error {
		done := b.Log.Step("image %s", what)
		s, err := spec()
		if err == nil {
			err = writeImageArchive(filepath.Join(out, "image.tar"), s)
		}
		done(err)
		return err
	})
	if hit {
		b.Log.Printf("image %s: cached", what)
	}
	return filepath.Join(dir, "image.tar"), err
}

func binaryKey(path string) string { return filepath.Base(filepath.Dir(path)) }

func binaryImage(tags []string, bin, at string, entrypoint []string, extra ...v1.Layer) func() (imageSpec, error) {
	return func() (imageSpec, error) {
		l, err := layerFromFiles([]fileEntry{{Path: at, Src: bin, Mode: 0o755}})
		if err != nil {
			return imageSpec{}, err
		}
		return imageSpec{Tags: tags, Layers: append(extra, l), Entrypoint: entrypoint}, nil
	}
}

// controlPlaneImages are the static pods' and etcd's images of a control
// plane, by the references its kubeadm lists.
func (b *Builder) controlPlaneImages(ctx context.Context, refs map[string]string, bins map[string]string) ([]string, error) {
	var out []string
	for _, c := range []string{KubeAPIServer, KubeControllerManager, KubeScheduler} {
		a, err := b.archive(refs[c], Key("cp-image", refs[c], binaryKey(bins[c])),
			binaryImage([]string{refs[c]}, bins[c], "/usr/local/bin/"+c, nil))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	etcd, err := b.BuildPrograms(ctx, []GoProgram{Etcd(tagOf(refs["etcd"]))})
	if err != nil {
		return nil, err
	}
	a, err := b.archive(refs["etcd"], Key("etcd-image", refs["etcd"], binaryKey(etcd["etcd"])),
		binaryImage([]string{refs["etcd"]}, etcd["etcd"], "/usr/local/bin/etcd", nil))
	return append(out, a), err
}

// sharedImages are on every node: the plan's kube-proxy (it runs
// Debian's iptables, so its image is the base root file system plus the
// binary), each control plane's CoreDNS, pause under every tag, and the
// test image.
func (b *Builder) sharedImages(ctx context.Context, p Plan, bins map[kubeversion.Version]map[string]string, refsOf map[kubeversion.Version]map[string]string, rootfsTar, kindDir string) ([]string, error) {
	sandbox, err := sandboxImage(kindDir)
	if err != nil {
		return nil, err
	}
	pauseTags := map[string]bool{sandbox: true}
	var out []string
	for _, v := range p.KubeProxyVersions {
		refs := refsOf[v]
		proxy := bins[v][KubeProxy]
		a, err := b.archive(refs[KubeProxy], Key("proxy-image", refs[KubeProxy], binaryKey(proxy), binaryKey(rootfsTar)), func() (imageSpec, error) {
			base, err := tarball.LayerFromFile(rootfsTar)
			if err != nil {
				return imageSpec{}, err
			}
			return binaryImage([]string{refs[KubeProxy]}, proxy, "/usr/local/bin/kube-proxy", nil, base)()
		})
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	for _, v := range p.ControlPlaneVersions {
		refs := refsOf[v]
		pauseTags[refs["pause"]] = true
		dns, err := b.BuildPrograms(ctx, []GoProgram{CoreDNS(tagOf(refs["coredns"]))})
		if err != nil {
			return nil, err
		}
		a, err := b.archive(refs["coredns"], Key("coredns-image", refs["coredns"], binaryKey(dns["coredns"])),
			binaryImage([]string{refs["coredns"]}, dns["coredns"], "/coredns", []string{"/coredns"}))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	pause, err := b.BuildPause(ctx)
	if err != nil {
		return nil, err
	}
	var tags []string
	for t := range pauseTags {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	a, err := b.archive("pause "+fmt.Sprint(tags), Key("pause-image", tags, binaryKey(pause)),
		binaryImage(tags, pause, "/pause", []string{"/pause"}))
	if err != nil {
		return nil, err
	}
	out = append(out, a)
	a, err = b.archive(TestImage, Key("toolbox-image", binaryKey(rootfsTar), toolboxApplets), func() (imageSpec, error) {
		return toolboxImage(rootfsTar)
	})
	return append(out, a), err
}

// toolboxApplets are the busybox commands the test image links.
var toolboxApplets = []string{"sh", "sleep", "cat", "echo", "ls", "env", "ps", "kill", "true", "false", "date", "grep", "wget", "nc", "id", "hostname", "mkdir", "rm", "test", "["}

// toolboxImage is Debian's busybox-static taken from the base root file
// system, with a link per applet.
func toolboxImage(rootfsTar string) (imageSpec, error) {
	tmp, err := os.MkdirTemp("", "ndfq-toolbox-")
	if err != nil {
		return imageSpec{}, err
	}
	defer os.RemoveAll(tmp)
	bb := filepath.Join(tmp, "busybox")
	if err := extractFromTar(rootfsTar, "./usr/bin/busybox", bb); err != nil {
		return imageSpec{}, fmt.Errorf("busybox from the base root file system: %w", err)
	}
	entries := []fileEntry{{Path: "/bin/busybox", Src: bb, Mode: 0o755}}
	for _, a := range toolboxApplets {
		entries = append(entries, fileEntry{Path: "/bin/" + a, Link: "busybox", Mode: 0o777})
	}
	l, err := layerFromFiles(entries)
	if err != nil {
		return imageSpec{}, err
	}
	return imageSpec{Tags: []string{TestImage}, Layers: []v1.Layer{l}, Cmd: []string{"sh"}}, nil
}
