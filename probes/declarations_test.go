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
		{"an unknown runtime read over the CRI is judged by its report", "cri-o://1.34.0", map[string]fixtures.Runtime{"n": {UserNamespacesHostNetwork: true}}, RuntimeCRI, nil, nil, nil},
		{"an unknown runtime read over the CRI: a feature it lacks is extra", "cri-o://1.34.0", map[string]fixtures.Runtime{"n": {MountOptions: true}}, RuntimeCRI,
			[]string{"VolumeBindMountOptions"}, []string{"UserNamespacesHostNetworkSupport"}, nil},
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

// A 1.38 kubelet with SecurityProfileOCI on: a CRI read (cri-api v0.37)
// cannot see seccompProfileOCI, so that feature stays undecided, the
// others are judged.
func TestWhatTheCRIReaderCannotSee(t *testing.T) {
	gates := Gates{fixtures.NodeDeclaredFeatures: {Enabled: true}, fixtures.SecurityProfileOCI: {Enabled: true}, fixtures.UserNamespacesHostNetworkSupport: {Enabled: true}}
	d := &Declaration{Node: "n", KubeletVersion: "v1.38.0-beta.0", Gates: gates, Runtime: "containerd://2.5.0", RuntimeFrom: RuntimeCRI}
	d.judge(fixtures.Runtime{UserNamespacesHostNetwork: true})
	if !slices.Equal(d.Undecided, []string{fixtures.SecurityProfileOCI}) || !slices.Contains(d.Missing, fixtures.UserNamespacesHostNetworkSupport) {
		t.Errorf("undecided %v missing %v", d.Undecided, d.Missing)
	}
	if !slices.Equal(d.RuntimeReport, []string{"userNamespacesHostNetwork"}) {
		t.Errorf("report %v", d.RuntimeReport)
	}
}
