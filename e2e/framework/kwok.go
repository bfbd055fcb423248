package framework

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ndfq/ndfq/clusters/kindconfig"
	"github.com/ndfq/ndfq/clusters/nodeimage"
	"github.com/ndfq/ndfq/clusters/topology"
	"github.com/ndfq/ndfq/internal/wait"
)

// KwokNode marks and taints the nodes kwok simulates.
const KwokNode = "kwok.x-k8s.io/node"

// RunKwok builds (or reuses) ndfq's kwok image, loads it into the plain
// cluster and runs kwok there, managing the nodes annotated KwokNode.
func (e *Env) RunKwok(ctx context.Context, c *PlainCluster) {
	GinkgoHelper()
	b := &nodeimage.Builder{Cache: nodeimage.Cache{Dir: e.Settings.CacheDir}, Log: e.Log}
	archive, err := b.KwokImage(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(c.LoadImageArchive(archive)).To(Succeed())
	const ns, name = "kube-system", "kwok-controller"
	_, err = c.Clientset.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	_, err = c.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	labels := map[string]string{"app": name}
	one := int32(1)
	_, err = c.Clientset.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				ServiceAccountName: name,
				Tolerations:        []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
				Containers: []corev1.Container{{
					Name: "kwok", Image: nodeimage.KwokImageTag, ImagePullPolicy: corev1.PullIfNotPresent,
					Args: []string{"--manage-nodes-with-annotation-selector=" + KwokNode + "=fake", "--cidr=10.0.0.1/16", "--node-ip=10.0.0.1"},
				}},
			}},
		},
	}, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(wait.Until(ctx, wait.PodRunning, "kwok to run", func(ctx context.Context) (bool, string, error) {
		d, err := c.Clientset.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		return d.Status.ReadyReplicas == 1, fmt.Sprintf("%d ready", d.Status.ReadyReplicas), nil
	})).To(Succeed())
}

// FakeNode is one node for kwok to simulate.
type FakeNode struct {
	Name, Pool, Kubelet string
	Declared            []string
}

// CreateFakeNodes creates the nodes (labelled by poolLabel, annotated and
// tainted for kwok, with the kubelet version and declared set a real
// kubelet of that version reports), 16 at a time.
func (c *PlainCluster) CreateFakeNodes(ctx context.Context, poolLabel string, nodes []FakeNode) {
	GinkgoHelper()
	var g errgroup.Group
	g.SetLimit(16)
	for _, n := range nodes {
		g.Go(func() error {
			node := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{poolLabel: n.Pool, "type": "kwok"}, Annotations: map[string]string{KwokNode: "fake"}},
				Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: KwokNode, Value: "fake", Effect: corev1.TaintEffectNoSchedule}}},
				Status:     corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: n.Kubelet}, DeclaredFeatures: n.Declared},
			}
			_, err := c.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
			return err
		})
	}
	Expect(g.Wait()).To(Succeed())
}

// UpKwokCluster brings up a one-node plain cluster of the control plane's
// node image (apiServerGates as its --feature-gates, "" for the defaults)
// and runs kwok in it: the home of a simulated fleet.
func (e *Env) UpKwokCluster(ctx context.Context, name string, t *topology.Topology, apiServerGates string) *PlainCluster {
	GinkgoHelper()
	cpPool, _ := PoolWhere(t.Pools(), ControlPlane)
	cpNode, _ := e.PoolNode(ctx, cpPool)
	cfg := kindconfig.Plain(name, e.NodeImage(ctx, cpNode))
	// Simulated nodes send no heartbeats (see nodeimage.kwokStages): the
	// node lifecycle controller must not mark them unreachable.
	patch := "kind: ClusterConfiguration\ncontrollerManager:\n  extraArgs:\n    node-monitor-grace-period: 24h\n"
	if apiServerGates != "" {
		patch += fmt.Sprintf("apiServer:\n  extraArgs:\n    feature-gates: %s\n", apiServerGates)
	}
	cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, patch)
	c := e.UpCluster(ctx, cfg)
	e.RunKwok(ctx, c)
	return c
}
