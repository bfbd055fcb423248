package framework

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/internal/kubeversion"
	"github.com/ndfq/ndfq/internal/wait"
)

// ExpectKubeProxy waits (wait-pod-running) until kube-proxy of version v is
// Ready on each of the cluster's nodes; a kube-proxy pod of another image
// fails at once.
func (e *Env) ExpectKubeProxy(ctx context.Context, v kubeversion.Version, nodes int) {
	GinkgoHelper()
	Expect(wait.Until(ctx, wait.PodRunning, fmt.Sprintf("kube-proxy %s Ready on %d nodes", v, nodes), func(ctx context.Context) (bool, string, error) {
		pods, err := e.Clientset.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-proxy"})
		if err != nil {
			return false, err.Error(), nil
		}
		ready := map[string]bool{}
		var notReady []string
		for _, p := range pods.Items {
			if img := p.Spec.Containers[0].Image; !strings.HasSuffix(img, ":"+v.String()) {
				return false, "", fmt.Errorf("kube-proxy pod %s on %s runs %s, not kube-proxy %s", p.Name, p.Spec.NodeName, img, v)
			}
			if wait.PodReady(&p) {
				ready[p.Spec.NodeName] = true
			} else {
				notReady = append(notReady, p.Name+" on "+p.Spec.NodeName)
			}
		}
		return len(ready) == nodes, fmt.Sprintf("Ready on %d of %d nodes; not Ready: %v", len(ready), nodes, notReady), nil
	})).To(Succeed())
}
