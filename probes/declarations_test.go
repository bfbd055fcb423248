package probes

import (
	"slices"
	"testing"

	"github.com/ndfq/ndfq/fixtures"
)

// A 1.37 kubelet with the user-namespace and bind-mount gates on declares
// UserNamespacesHostNetworkSupport only where its runtime reports it.
func TestRuntimeDecidesWhatIsExpected(t *testing.T) {
	gates := Gates{
		fixtures.NodeDeclaredFeatures: {Enabled: true}, fixtures.UserNamespacesHostNetworkSupport: {Enabled: true},
		fixtures.VolumeBindMountOptions: {Enabled: true}, fixtures.RestartAllContainersOnContainerExits: {Enabled: true},
	}
	declared := []string{"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}
	cases := []struct {
		name, runtime      string
		read               map[string]fixtures.Runtime
		from               string
		missing, extra, un []string
	}{
		{"containerd 2.4.2 by its release", "containerd://2.4.2", nil, RuntimeRelease, nil, nil, nil},
		{"containerd 1.6 by its release: the declaration is extra", "containerd://1.6.20", nil, RuntimeRelease, nil, []string{"UserNamespacesHostNetworkSupport"}, nil},
		{"the CRI's own report wins over the release", "containerd://2.4.2", map[string]fixtures.Runtime{"n": {}}, RuntimeCRI, nil, []string{"UserNamespacesHostNetworkSupport"}, nil},
		{"an unknown runtime leaves both runtime features undecided", "cri-o://1.34.0", nil, RuntimeUnknown, nil, nil,
			[]string{"UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &Declaration{Node: "n", KubeletVersion: "v1.37.2", Declared: declared, Gates: gates, Runtime: c.runtime}
			rt, from := runtimeOf(c.read, d)
			d.RuntimeFrom = from
			d.judge(rt)
			if from != c.from || !slices.Equal(d.Missing, c.missing) || !slices.Equal(d.Extra, c.extra) || !slices.Equal(d.Undecided, c.un) {
				t.Errorf("from %s missing %v extra %v undecided %v; want %s %v %v %v", from, d.Missing, d.Extra, d.Undecided, c.from, c.missing, c.extra, c.un)
			}
		})
	}
}
