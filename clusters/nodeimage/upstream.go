package nodeimage

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ndfq/ndfq/internal/kubeversion"

	"github.com/ndfq/ndfq/internal/sh"
)

// Sources of node images.
const (
	SourceOffline  = "offline"  // built here from the module proxy and Debian
	SourceUpstream = "upstream" // kind's published, digest-pinned kindest/node images
)

// upstreamImages are published kindest/node images pinned by digest, as
// kind's release notes list them. Only digests read from a kind release
// go here: kind v0.33.0's own default image is the one ndfq can verify
// offline (sigs.k8s.io/kind/pkg/apis/config/defaults.Image).
var upstreamImages = map[kubeversion.Version]string{
	"v1.37.0": "kindest/node:v1.37.0@sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5",
}

// PullUpstream resolves every version of the plan to its pinned published
// image and pulls it. These images need a registry, and from 1.35 on their
// kubelets and trixie's systemd refuse cgroup v1 hosts: use them on cgroup v2.
func (b *Builder) PullUpstream(ctx context.Context, p Plan) (Result, error) {
	p = p.Normalize()
	if len(p.Variants) > 0 {
		return nil, fmt.Errorf("--source=upstream: kind's images carry one Kubernetes version and kind's own containerd, not %s: use --source=offline", p.Variants[0])
	}
	out := Result{}
	var missing []string
	for _, k := range p.Kinds() {
		ref, ok := upstreamImages[k.Version]
		if !ok {
			missing = append(missing, string(k.Version))
			continue
		}
		out[k] = ref
	}
	if len(missing) > 0 {
		var known []string
		for v := range upstreamImages {
			known = append(known, string(v))
		}
		sort.Strings(known)
		return nil, fmt.Errorf("--source=upstream: no digest-pinned kindest/node image is known for %s (known: %s); add it to clusters/nodeimage/upstream.go from kind's release notes, or use --source=offline",
			strings.Join(missing, ", "), strings.Join(known, ", "))
	}
	for _, ref := range out {
		done := b.Log.Step("docker pull %s", ref)
		err := sh.Run(ctx, "docker", "pull", ref)
		done(err)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
