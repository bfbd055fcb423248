package main

import (
	"fmt"
	"testing"
)

// Plans merge: next's variant and kube-proxy stay what next needs, and a
// control plane named by flag brings its own kube-proxy.
func TestImagePlanMergesVariantsAndKubeProxies(t *testing.T) {
	p, err := imagePlan([]string{"next", "skew-1.37"}, "", nil, []string{"1.36.3"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(p.KubeProxyVersions); got != "[v1.36.3 v1.37.2]" {
		t.Errorf("kube-proxy versions %s", got)
	}
	if got := fmt.Sprint(p.ControlPlaneVersions); got != "[v1.36.3 v1.37.2 v1.38.0-beta.0]" {
		t.Errorf("control planes %s", got)
	}
	if got := fmt.Sprint(p.NodeVersions); got != "[v1.34.12 v1.35.4 v1.35.8 v1.36.3 v1.36.5 v1.37.2]" {
		t.Errorf("kubelets %s: 1.38.0-beta.0's own kubelet must not be built", got)
	}
	alone, err := imagePlan(nil, "", []string{"1.35.4", "1.36.3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(alone.ControlPlaneVersions, alone.KubeProxyVersions); got != "[v1.36.3] [v1.36.3]" {
		t.Errorf("versions alone: the newest is the control plane and its kube-proxy, got %s", got)
	}
}
