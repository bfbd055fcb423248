package nodeimage

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/ndfq/ndfq/internal/kubeversion"

	"github.com/ndfq/ndfq/internal/sh"
)

// OtherKubeletsDir holds, inside every node, the kubelets of the plan's
// other versions (OtherKubeletsDir/v1.35.4/kubelet) for in-place swaps.
const OtherKubeletsDir = "/opt/ndfq/kubelet"

// OtherKubeadmsDir holds, inside a control-plane node, the kubeadms of the
// kube-proxy versions ndfq deploys (OtherKubeadmsDir/v1.37.2/kubeadm).
const OtherKubeadmsDir = "/opt/ndfq/kubeadm"

type nodeImageSpec struct {
	// Version is kind's: kubeadm's, and the control plane's on a control-plane image.
	Version kubeversion.Version
	// KubeletVersion is set on a variant image whose kubelet is older.
	KubeletVersion kubeversion.Version
	Base           string
	Binaries       map[string]string
	OtherKubelets  map[kubeversion.Version]string
	OtherKubeadms  map[kubeversion.Version]string
	Archives       []string
	ControlPlane   bool
	// Runtime names a runtime other than the base image's; RuntimeFiles
	// are its binaries by node path.
	Runtime      string
	RuntimeFiles map[string]string
}

func (s nodeImageSpec) key() string {
	bins := map[string]string{}
	for name, p := range s.Binaries {
		bins[name] = binaryKey(p)
	}
	others := map[string]string{}
	for v, p := range s.OtherKubelets {
		others[string(v)] = binaryKey(p)
	}
	var archives []string
	for _, a := range s.Archives {
		archives = append(archives, binaryKey(a))
	}
	sort.Strings(archives)
	key := Key("node", s.Version, s.Base, bins, others, archives, s.ControlPlane)
	if s.KubeletVersion != "" || len(s.OtherKubeadms) > 0 { // keeps the keys of images built before these fields
		kubeadms := map[string]string{}
		for v, p := range s.OtherKubeadms {
			kubeadms[string(v)] = binaryKey(p)
		}
		key = Key(key, s.KubeletVersion, kubeadms)
	}
	if s.Runtime != "" {
		files := map[string]string{}
		for dst, p := range s.RuntimeFiles {
			files[dst] = binaryKey(p)
		}
		key = Key(key, s.Runtime, files)
	}
	return key
}

// tag is the node image's tag: version, the kubelet's where older,
// runtime where not the base's, key.
func (s nodeImageSpec) tag() string {
	tag := string(s.Version)
	if s.KubeletVersion != "" {
		tag += "-kubelet-" + string(s.KubeletVersion)
	}
	if s.Runtime != "" {
		tag += "-" + s.Runtime
	}
	return fmt.Sprintf("%s:%s-%s", NodeImageName, tag, s.key()[:12])
}

// nodeImage stages binaries into the base image and preloads every image
// archive into the node's containerd, as `kind build node-image` does,
// with nothing pulled.
func (b *Builder) nodeImage(ctx context.Context, s nodeImageSpec) (string, error) {
	key, image := s.key(), s.tag()
	if imageExists(ctx, image) {
		b.Log.Printf("node image %s: cached", image)
		return image, nil
	}
	done := b.Log.Step("node image %s (%d images preloaded)", image, len(s.Archives))
	err := b.assembleNode(ctx, s, image, "ndfq-build-"+key[:12])
	done(err)
	return image, err
}

func (b *Builder) assembleNode(ctx context.Context, s nodeImageSpec, image, name string) error {
	_ = sh.Run(context.WithoutCancel(ctx), "docker", "rm", "-f", name)
	if err := sh.Run(ctx, "docker", "run", "-d", "--privileged", "--name", name, "--entrypoint=sleep", s.Base, "infinity"); err != nil {
		return err
	}
	defer sh.Run(context.WithoutCancel(ctx), "docker", "rm", "-f", name) //nolint:errcheck // best-effort cleanup, also after an interrupt
	cp := func(src, dst string) error {
		if err := sh.Run(ctx, "docker", "exec", name, "mkdir", "-p", filepath.Dir(dst)); err != nil {
			return err
		}
		return sh.Run(ctx, "docker", "cp", src, name+":"+dst)
	}
	for _, c := range slices.Sorted(maps.Keys(s.Binaries)) {
		if err := cp(s.Binaries[c], "/usr/bin/"+c); err != nil {
			return err
		}
	}
	for _, v := range slices.Sorted(maps.Keys(s.OtherKubelets)) {
		if err := cp(s.OtherKubelets[v], fmt.Sprintf("%s/%s/kubelet", OtherKubeletsDir, v)); err != nil {
			return err
		}
	}
	for _, v := range slices.Sorted(maps.Keys(s.OtherKubeadms)) {
		if err := cp(s.OtherKubeadms[v], fmt.Sprintf("%s/%s/kubeadm", OtherKubeadmsDir, v)); err != nil {
			return err
		}
	}
	for _, dst := range slices.Sorted(maps.Keys(s.RuntimeFiles)) {
		// The base's path may be a link to Debian's binary: replace, never write through it.
		if err := sh.Run(ctx, "docker", "exec", name, "rm", "-f", dst); err != nil {
			return err
		}
		if err := cp(s.RuntimeFiles[dst], dst); err != nil {
			return err
		}
	}
	for i, a := range s.Archives {
		if err := cp(a, fmt.Sprintf("/ndfq-images/%02d.tar", i)); err != nil {
			return err
		}
	}
	script := fmt.Sprintf(`set -e
echo %s > /kind/version
containerd >/run/ndfq-preload.log 2>&1 &
pid=$!
for i in $(seq 1 60); do ctr version >/dev/null 2>&1 && break; sleep 0.5; done
for f in /ndfq-images/*.tar; do
  ctr -n k8s.io images import --label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests "$f" >/dev/null
done
ctr -n k8s.io images ls -q | sort > /kind/images
kill $pid; wait $pid || true
rm -rf /ndfq-images /run/ndfq-preload.log
`, s.Version)
	if err := sh.Run(ctx, "docker", "exec", name, "bash", "-c", script); err != nil {
		return err
	}
	if err := sh.Run(ctx, "docker", "stop", "-t", "1", name); err != nil {
		return err
	}
	return sh.Run(ctx, "docker", "commit",
		"--change", `ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]`,
		"--change", `CMD []`,
		name, image)
}

// extractFromTar copies one regular file out of a tarball.
func extractFromTar(tarPath, member, dst string) error {
	f, err := os.Open(tarPath)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s has no %s", tarPath, member)
		}
		if err != nil {
			return err
		}
		if h.Name != member {
			continue
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		return err
	}
}
