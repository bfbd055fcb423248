package nodeimage

import (
	"fmt"
	"strings"

	"golang.org/x/mod/semver"
)

// Kubernetes components a node image may carry.
const (
	Kubelet               = "kubelet"
	Kubeadm               = "kubeadm"
	Kubectl               = "kubectl"
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	KubeProxy             = "kube-proxy"
)

// NodeComponents run on every node; kind drives kubectl on control planes only.
var NodeComponents = []string{Kubelet, Kubeadm}

// ControlPlaneComponents are the extra binaries of a control-plane version;
// the last four also ship as images that kubeadm runs as pods.
var ControlPlaneComponents = []string{Kubectl, KubeAPIServer, KubeControllerManager, KubeScheduler, KubeProxy}

// ImageComponents are the components kubeadm runs from images.
var ImageComponents = []string{KubeAPIServer, KubeControllerManager, KubeScheduler, KubeProxy}

// KubernetesVersion is a release of k8s.io/kubernetes, "v1.37.2" form.
type KubernetesVersion string

// ParseKubernetesVersion accepts "1.37.2", "v1.37.2" and pre-releases.
func ParseKubernetesVersion(s string) (KubernetesVersion, error) {
	v := s
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !semver.IsValid(v) || semver.Major(v) != "v1" || strings.Count(strings.SplitN(v, "-", 2)[0], ".") != 2 {
		return "", fmt.Errorf("%q is not a Kubernetes release version (want 1.MINOR.PATCH, e.g. 1.37.2)", s)
	}
	return KubernetesVersion(v), nil
}

// Minor is "1.37".
func (v KubernetesVersion) Minor() string {
	return strings.TrimPrefix(semver.MajorMinor(string(v)), "v")
}

func (v KubernetesVersion) String() string { return string(v) }

// versionLDFlags stamp a binary with its real version: without them every
// component reports v0.0.0-master and kubeadm's skew checks break.
func versionLDFlags(v KubernetesVersion) []string {
	minor := strings.TrimPrefix(semver.MajorMinor(string(v)), "v1.")
	var flags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X "+pkg+".gitVersion="+string(v),
			"-X "+pkg+".gitMajor=1",
			"-X "+pkg+".gitMinor="+minor,
			"-X "+pkg+".gitTreeState=clean",
			"-X "+pkg+".buildDate=1970-01-01T00:00:00Z",
		)
	}
	return flags
}

// KubernetesPrograms are the Go programs for the named components of one release.
func KubernetesPrograms(v KubernetesVersion, components []string) []GoProgram {
	var out []GoProgram
	for _, c := range components {
		out = append(out, GoProgram{
			Module:  "k8s.io/kubernetes",
			Version: string(v),
			Package: "k8s.io/kubernetes/cmd/" + c,
			LDFlags: versionLDFlags(v),
		})
	}
	return out
}
