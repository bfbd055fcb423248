package nodeimage

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Versions of the programs that are not Kubernetes itself. etcd and CoreDNS
// follow the tags kubeadm asks for (see imageProgram); crictl has no
// per-minor need and v1.37.0 talks to every CRI the nodes run.
const CrictlVersion = "v1.37.0"

// Crictl is needed inside nodes by `kind load` and `kind export logs`.
func Crictl() GoProgram {
	return GoProgram{
		Module:  "sigs.k8s.io/cri-tools",
		Version: CrictlVersion,
		Package: "sigs.k8s.io/cri-tools/cmd/crictl",
		LDFlags: []string{"-X sigs.k8s.io/cri-tools/pkg/version.Version=" + CrictlVersion},
	}
}

// Etcd is the etcd server at the version of a kubeadm tag such as 3.6.6-0.
func Etcd(tag string) GoProgram {
	v := "v" + strings.SplitN(tag, "-", 2)[0]
	return GoProgram{Module: "go.etcd.io/etcd/server/v3", Version: v, Package: "go.etcd.io/etcd/server/v3", Binary: "etcd"}
}

// CoreDNS is CoreDNS at the version of a kubeadm tag such as v1.14.6.
func CoreDNS(tag string) GoProgram {
	return GoProgram{Module: "github.com/coredns/coredns", Version: tag, Package: "github.com/coredns/coredns", Binary: "coredns"}
}

//go:embed pause/main.go
var pauseSource []byte

// BuildPause builds ndfq's own pause program from its embedded source.
func (b *Builder) BuildPause(ctx context.Context) (string, error) {
	key := Key("pause", string(pauseSource), runtime.Version(), runtime.GOARCH)
	dir, hit, err := b.Cache.Fill("bin", key, func(out string) error {
		src := filepath.Join(out, "src")
		defer os.RemoveAll(src)
		if err := os.MkdirAll(src, 0o755); err != nil {
			return err
		}
		gomod := fmt.Sprintf("module ndfq.local/pause\n\ngo %s\n", strings.TrimPrefix(runtime.Version(), "go"))
		if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(gomod), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, "main.go"), pauseSource, 0o644); err != nil {
			return err
		}
		_, err := runGo(ctx, src, "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(out, "pause"), ".")
		return err
	})
	if err == nil && !hit {
		b.Log.Printf("build pause: done")
	}
	return filepath.Join(dir, "pause"), err
}
