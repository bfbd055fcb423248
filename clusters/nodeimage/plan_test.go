package nodeimage

import (
	"slices"
	"testing"

	"github.com/ndfq/ndfq/internal/kubeversion"
)

// Each release's entry holds exactly the binaries Build makes of it, so a
// minor shared by two topologies has one entry where their program sets
// agree.
func TestBinsByRelease(t *testing.T) {
	v := func(s string) kubeversion.Version { return kubeversion.MustParse(s) }
	p := Plan{NodeVersions: []kubeversion.Version{v("1.36.5"), v("1.37.2")}, ControlPlaneVersions: []kubeversion.Version{v("1.37.2")}}
	got := p.BinsByRelease()
	if len(got) != 2 || got[0].Release != v("1.36.5") || got[1].Release != v("1.37.2") {
		t.Fatalf("releases %+v", got)
	}
	node := len(KubernetesPrograms(v("1.36.5"), p.Normalize().components(v("1.36.5"))))
	if len(got[0].Keys) != node || len(got[1].Keys) <= node {
		t.Errorf("1.36.5 builds its node binaries (%d), 1.37.2 those and the control plane's: %d, %d", node, len(got[0].Keys), len(got[1].Keys))
	}
	other := Plan{NodeVersions: []kubeversion.Version{v("1.36.5"), v("1.38.0")}, ControlPlaneVersions: []kubeversion.Version{v("1.38.0")}}.BinsByRelease()
	if !slices.Equal(other[0].Keys, got[0].Keys) {
		t.Errorf("a node-only 1.36.5 is one entry whatever the control plane: %v, %v", other[0].Keys, got[0].Keys)
	}
}
