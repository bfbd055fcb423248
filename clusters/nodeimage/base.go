package nodeimage

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ndfq/ndfq/internal/sh"
)

// BaseSpec is what the node root file system is made of.
type BaseSpec struct {
	Suite    string   // Debian suite; bookworm's systemd 252 still boots on cgroup v1
	Mirror   string   // Debian mirror debootstrap reads
	Packages []string // --include list
	KindDir  string   // the kind module's folder, source of images/base/files
	Crictl   string   // crictl binary (kind load and kind export logs need it)
}

// DefaultBasePackages is Debian's share of what kind's base image carries
// (containerd, runc and the CNI plugins come from Debian here, not from
// source builds), plus busybox-static for the suites' test image.
var DefaultBasePackages = []string{
	"systemd", "systemd-sysv", "containerd", "runc", "containernetworking-plugins",
	"iptables", "nftables", "conntrack", "iproute2", "ethtool", "mount", "util-linux",
	"kmod", "libseccomp2", "pigz", "ca-certificates", "jq", "procps", "busybox-static",
}

// BaseImageName is the repository of base images; the tag is the content key.
const BaseImageName = "ndfq/base"

// kindFiles lists kind's base image files with their modes, as its Dockerfile copies them.
func kindFiles(kindDir string) (map[string]fs.FileMode, error) {
	root := filepath.Join(kindDir, "images", "base", "files")
	files := map[string]fs.FileMode{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		mode := fs.FileMode(0o644)
		if strings.HasPrefix(rel, "usr/local/bin/") || strings.HasPrefix(rel, "kind/bin/") {
			mode = 0o755
		}
		if strings.Contains(rel, "fuse-overlayfs") {
			return nil // rootless only; Debian ships no snapshotter for it
		}
		files[rel] = mode
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read kind's node files from %s: %w", root, err)
	}
	return files, nil
}

func fileDigests(root string, files map[string]fs.FileMode) (map[string]string, error) {
	out := map[string]string{}
	for rel := range files {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		out[rel] = Key(string(b))
	}
	return out, nil
}

func (s BaseSpec) key() (string, error) {
	files, err := kindFiles(s.KindDir)
	if err != nil {
		return "", err
	}
	digests, err := fileDigests(filepath.Join(s.KindDir, "images", "base", "files"), files)
	if err != nil {
		return "", err
	}
	crictl, err := os.ReadFile(s.Crictl)
	if err != nil {
		return "", err
	}
	pkgs := append([]string(nil), s.Packages...)
	sort.Strings(pkgs)
	return Key("base", s.Suite, s.Mirror, pkgs, digests, Key(string(crictl)), baseTweaks), nil
}

// baseTweaks names the changes made to kind's files; part of the key.
const baseTweaks = "restrict_oom_score_adj=true;debian-paths;trim-systemd;cri-base-json"

// BuildBase makes (or reuses) the base image and returns its tag and the
// root file system tarball it was imported from.
func (b *Builder) BuildBase(ctx context.Context, s BaseSpec) (image, rootfsTar string, err error) {
	key, err := s.key()
	if err != nil {
		return "", "", err
	}
	image = BaseImageName + ":" + key[:16]
	dir, hit, err := b.Cache.Fill("rootfs", key, func(dir string) error {
		done := b.Log.Step("base root file system (debootstrap %s)", s.Suite)
		err := b.makeRootfs(ctx, s, dir)
		done(err)
		return err
	})
	if err != nil {
		return "", "", err
	}
	rootfsTar = filepath.Join(dir, "rootfs.tar")
	if hit && imageExists(ctx, image) {
		b.Log.Printf("base image %s: cached", image)
		return image, rootfsTar, nil
	}
	done := b.Log.Step("import base image %s", image)
	err = importBase(ctx, rootfsTar, image)
	done(err)
	return image, rootfsTar, err
}

func (b *Builder) makeRootfs(ctx context.Context, s BaseSpec, out string) error {
	rootfs := filepath.Join(out, "rootfs")
	defer os.RemoveAll(rootfs)
	for _, tool := range []string{"debootstrap", "chroot", "tar"} {
		if !lookPath(tool) {
			return fmt.Errorf("%s is not installed: run `ndfq host setup` (it installs the build tools on Debian) or install it", tool)
		}
	}
	if err := sh.Run(ctx, "debootstrap", "--variant=minbase", "--include="+strings.Join(s.Packages, ","), s.Suite, rootfs, s.Mirror); err != nil {
		return err
	}
	b.Log.Printf("  debootstrap finished; adding kind's node files")
	files, err := kindFiles(s.KindDir)
	if err != nil {
		return err
	}
	src := filepath.Join(s.KindDir, "images", "base", "files")
	for rel, mode := range files {
		data, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			return err
		}
		if rel == "etc/containerd/config.toml" {
			// Without it every pod sandbox fails where root cannot lower oom_score_adj.
			data = []byte(strings.Replace(string(data), "restrict_oom_score_adj = false", "restrict_oom_score_adj = true", 1))
		}
		if err := writeFile(filepath.Join(rootfs, rel), data, mode); err != nil {
			return err
		}
	}
	crictl, err := os.ReadFile(s.Crictl)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(rootfs, "usr/local/bin/crictl"), crictl, 0o755); err != nil {
		return err
	}
	if err := debianPaths(rootfs); err != nil {
		return err
	}
	if err := criBaseSpec(ctx, rootfs); err != nil {
		return err
	}
	if err := trimSystemd(ctx, rootfs); err != nil {
		return err
	}
	b.Log.Printf("  packing root file system")
	return sh.Run(ctx, "tar", "--numeric-owner", "-C", rootfs, "-cf", filepath.Join(out, "rootfs.tar"), ".")
}

func writeFile(p string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

// debianPaths points kind's expected paths at where Debian installs things.
func debianPaths(rootfs string) error {
	links := map[string]string{
		"usr/local/bin/containerd": "/usr/bin/containerd",
		"opt/cni/bin":              "/usr/lib/cni",
	}
	for link, target := range links {
		p := filepath.Join(rootfs, link)
		_ = os.RemoveAll(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, p); err != nil {
			return err
		}
	}
	for _, d := range []string{"etc/kubernetes/manifests", "kind/manifests", "etc/cni/net.d"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// criBaseSpec writes containerd's base runtime spec as kind does: the
// default spec, the product-files hook added, the rlimits removed.
func criBaseSpec(ctx context.Context, rootfs string) error {
	out, err := sh.Output(ctx, "chroot", rootfs, "ctr", "oci", "spec")
	if err != nil {
		return err
	}
	var spec map[string]any
	if err := json.Unmarshal(out, &spec); err != nil {
		return fmt.Errorf("ctr oci spec: %w", err)
	}
	hooks, _ := spec["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
	}
	cc, _ := hooks["createContainer"].([]any)
	hooks["createContainer"] = append(cc, map[string]any{"path": "/kind/bin/mount-product-files.sh"})
	spec["hooks"] = hooks
	if p, ok := spec["process"].(map[string]any); ok {
		delete(p, "rlimits")
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(rootfs, "etc/containerd/cri-base.json"), data, 0o644)
}

// trimSystemd disables what a container must not run, as kind's base does.
func trimSystemd(ctx context.Context, rootfs string) error {
	globs := []string{
		"lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service",
		"lib/systemd/system/multi-user.target.wants/*",
		"etc/systemd/system/*.wants/*",
		"lib/systemd/system/local-fs.target.wants/*",
		"lib/systemd/system/sockets.target.wants/*udev*",
		"lib/systemd/system/sockets.target.wants/*initctl*",
		"lib/systemd/system/basic.target.wants/*",
	}
	if err := removeGlobs(rootfs, append(globs, packageLeftovers...)); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(rootfs, "etc/systemd/journald.conf"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString("ReadKMsg=no\n")
	f.Close()
	if err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(rootfs, "sbin/init"))
	if err := os.Symlink("/usr/lib/systemd/systemd", filepath.Join(rootfs, "sbin/init")); err != nil {
		return err
	}
	if err := sh.Run(ctx, "chroot", rootfs, "systemctl", "enable", "kubelet.service", "containerd.service", "undo-mount-hacks.service"); err != nil {
		return err
	}
	return sh.Run(ctx, "chroot", rootfs, "systemctl", "mask", "systemd-binfmt.service")
}

// packageLeftovers are what apt and dpkg leave that no image needs.
var packageLeftovers = []string{"var/lib/apt/lists/*", "var/cache/apt/archives/*.deb", "usr/share/doc/*", "usr/share/man/*"}

// removeGlobs removes whatever matches each glob under rootfs.
func removeGlobs(rootfs string, globs []string) error {
	for _, g := range globs {
		matches, _ := filepath.Glob(filepath.Join(rootfs, g))
		for _, m := range matches {
			if err := os.RemoveAll(m); err != nil {
				return err
			}
		}
	}
	return nil
}

func imageExists(ctx context.Context, image string) bool {
	return sh.Run(ctx, "docker", "image", "inspect", "--format", "{{.Id}}", image) == nil
}

// importBase imports the root file system and sets what kind's base image
// sets (docker import cannot set a stop signal, so a one-line build does).
func importBase(ctx context.Context, rootfsTar, image string) error {
	f, err := os.Open(rootfsTar)
	if err != nil {
		return err
	}
	defer f.Close()
	raw := BaseImageName + "-rootfs:" + strings.SplitN(image, ":", 2)[1]
	if _, err := sh.OutputWithStdin(ctx, f, "docker", "import", "-", raw); err != nil {
		return err
	}
	dockerfile := fmt.Sprintf("FROM %s\nENV container=docker\nSTOPSIGNAL SIGRTMIN+3\nENTRYPOINT [\"/usr/local/bin/entrypoint\", \"/sbin/init\"]\n", raw)
	return dockerBuild(ctx, dockerfile, image)
}

// dockerBuild runs the legacy builder on a Dockerfile with an empty context;
// it never pulls, FROM names a local image.
func dockerBuild(ctx context.Context, dockerfile, image string) error {
	dir, err := os.MkdirTemp("", "ndfq-build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		return err
	}
	cmd := []string{"build", "-q", "-t", image, dir}
	_, err = sh.OutputWithStdin(ctx, nil, "env", append([]string{"DOCKER_BUILDKIT=0", "docker"}, cmd...)...)
	return err
}
