package nodeimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/ndfq/ndfq/internal/gotool"
)

// Kwok is the kwok release ndfq simulates large fleets with.
var Kwok = GoProgram{Module: "sigs.k8s.io/kwok", Version: "v0.8.0", Package: "sigs.k8s.io/kwok/cmd/kwok"}

// KwokImageTag is the kwok image ndfq builds and loads into a cluster.
var KwokImageTag = "ndfq.local/kwok:" + Kwok.Version

// kwokStages are the release's own "fast" stages: nodes become Ready
// once, pods Running and Ready at once, and go when deleted. No heartbeat
// stage: thousands of simulated nodes renewing leases would measure this
// two-core host, not the probe (the scale cluster stretches the node
// monitor grace period instead).
var kwokStages = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// KwokImage builds (or reuses) an image archive of kwok with its stages
// in /etc/kwok/kwok.yaml, run as `/kwok --config /etc/kwok/kwok.yaml`.
func (b *Builder) KwokImage(ctx context.Context) (string, error) {
	bins, err := b.BuildPrograms(ctx, []GoProgram{Kwok})
	if err != nil {
		return "", err
	}
	mod, err := gotool.Download(ctx, Kwok.Module, Kwok.Version)
	if err != nil {
		return "", err
	}
	var docs []string
	for _, f := range kwokStages {
		data, err := os.ReadFile(filepath.Join(mod.Dir, f))
		if err != nil {
			return "", err
		}
		doc := string(data)
		if strings.HasSuffix(f, "pod-ready.yaml") {
			if doc, err = withContainerResources(doc); err != nil {
				return "", err
			}
		}
		docs = append(docs, doc)
	}
	config := strings.Join(docs, "\n---\n")
	bin := bins["kwok"]
	return b.archive(KwokImageTag, Key("kwok-image", KwokImageTag, binaryKey(bin), config), func() (imageSpec, error) {
		tmp, err := os.MkdirTemp("", "ndfq-kwok-")
		if err != nil {
			return imageSpec{}, err
		}
		defer os.RemoveAll(tmp)
		cfg := filepath.Join(tmp, "kwok.yaml")
		if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
			return imageSpec{}, err
		}
		l, err := layerFromFiles([]fileEntry{{Path: "/kwok", Src: bin, Mode: 0o755}, {Path: "/etc/kwok/kwok.yaml", Src: cfg, Mode: 0o644}})
		if err != nil {
			return imageSpec{}, err
		}
		return imageSpec{Tags: []string{KwokImageTag}, Layers: []v1.Layer{l}, Entrypoint: []string{"/kwok", "--config", "/etc/kwok/kwok.yaml"}}, nil
	})
}

// runningContainer is how kwok's pod-ready stage renders a running
// container's status (in its range over .spec.containers).
const runningContainer = "        restartCount: 0\n        state:\n          running:\n"

// withContainerResources makes simulated containers report their spec's
// resources: the apiserver refuses to resize a running pod whose
// container statuses carry none ("Pod running on node without support
// for resize": it takes that for a kubelet without in-place resize), and
// the probe's updates are resizes.
func withContainerResources(stage string) (string, error) {
	if !strings.Contains(stage, runningContainer) {
		return "", fmt.Errorf("kwok %s pod-ready stage: no running container status to add resources to", Kwok.Version)
	}
	return strings.Replace(stage, runningContainer, "        restartCount: 0\n        resources:\n        {{ with .resources }}\n        {{ YAML . 2 }}\n        {{ else }}\n          {}\n        {{ end }}\n        state:\n          running:\n", 1), nil
}
