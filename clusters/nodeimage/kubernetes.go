package nodeimage

import (
	"strings"

	"github.com/ndfq/ndfq/internal/kubeversion"
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

// versionLDFlags stamp a binary with its real version: without them every
// component reports v0.0.0-master and kubeadm's skew checks break.
func versionLDFlags(v kubeversion.Version) []string {
	minor := strings.TrimPrefix(v.Minor(), "1.")
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
func KubernetesPrograms(v kubeversion.Version, components []string) []GoProgram {
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
