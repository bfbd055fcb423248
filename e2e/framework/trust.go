package framework

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ndfq/ndfq/clusters/surgery"
)

// kubeletConfig is the kubelet's kubeconfig on a kubeadm node.
const kubeletConfig = "/etc/kubernetes/kubelet.conf"

// KubeletClient is a client holding node's own kubelet credentials, read
// from the node as an attacker who took that one machine would read them:
// its kubeconfig and the client certificate it names (system:node:<node>
// in system:nodes). It reaches the apiserver the suite reaches.
func (e *Env) KubeletClient(ctx context.Context, node string) kubernetes.Interface {
	GinkgoHelper()
	kn, err := e.Cluster.KindNode(node)
	Expect(err).NotTo(HaveOccurred())
	raw, err := surgery.ReadFile(kn, kubeletConfig)
	Expect(err).NotTo(HaveOccurred())
	kc, err := clientcmd.Load(raw)
	Expect(err).NotTo(HaveOccurred(), "%s on %s", kubeletConfig, node)
	ctxName := kc.CurrentContext
	Expect(kc.Contexts).To(HaveKey(ctxName), "%s on %s names no current context", kubeletConfig, node)
	user := kc.AuthInfos[kc.Contexts[ctxName].AuthInfo]
	Expect(user).NotTo(BeNil(), "%s on %s: no user", kubeletConfig, node)
	certPEM, keyPEM := user.ClientCertificateData, user.ClientKeyData
	if len(certPEM) == 0 {
		certPEM, err = surgery.ReadFile(kn, user.ClientCertificate)
		Expect(err).NotTo(HaveOccurred())
	}
	if len(keyPEM) == 0 {
		keyPEM, err = surgery.ReadFile(kn, user.ClientKey)
		Expect(err).NotTo(HaveOccurred())
	}
	admin := e.Cluster.Client.RESTConfig()
	cfg := &rest.Config{Host: admin.Host, UserAgent: fmt.Sprintf("ndfq-e2e-as-kubelet-%s", node),
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData, CAFile: admin.CAFile, ServerName: admin.ServerName,
			Insecure: admin.Insecure, CertData: certPEM, KeyData: keyPEM}}
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	return cs
}
