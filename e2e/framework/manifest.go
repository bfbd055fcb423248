package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s"

	"github.com/ndfq/ndfq/internal/wait"
)

// ApplyManifest creates every object of a file under the repository's
// config/ (as a user would kubectl apply it), or of an absolute path, and
// deletes them at cleanup.
func (e *Env) ApplyManifest(ctx context.Context, path string) {
	GinkgoHelper()
	applyManifest(ctx, e.Cluster.Client, e.Clientset, path)
}

// ApplyManifest is Env.ApplyManifest on the plain cluster.
func (c *PlainCluster) ApplyManifest(ctx context.Context, path string) {
	GinkgoHelper()
	applyManifest(ctx, c.Client, c.Clientset, path)
}

func applyManifest(ctx context.Context, kc klient.Client, cs kubernetes.Interface, path string) {
	GinkgoHelper()
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", path)
	}
	r := kc.Resources()
	each := func(ctx context.Context, h decoder.HandlerFunc) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return decoder.DecodeEach(ctx, f, h)
	}
	var namespaces []string
	Expect(each(ctx, func(ctx context.Context, obj k8s.Object) error {
		if obj.GetObjectKind().GroupVersionKind().Kind == "Namespace" {
			namespaces = append(namespaces, obj.GetName())
			// Made already for what the manifest's objects read (a ConfigMap).
			return ignoreExists(r.Create(ctx, obj))
		}
		return r.Create(ctx, obj)
	})).To(Succeed(), "apply %s", path)
	DeferCleanup(func(ctx SpecContext) {
		Expect(each(ctx, decoder.DeleteIgnoreNotFound(r))).To(Succeed(), "delete %s", path)
		for _, ns := range namespaces {
			Expect(waitNamespaceGone(ctx, cs, ns)).To(Succeed())
		}
	})
}

// ProbeImageArchive is ndfq's own image archive (make probe-image).
func ProbeImageArchive() string {
	if p := os.Getenv("NDFQ_PROBE_IMAGE"); p != "" {
		return p
	}
	p, _ := filepath.Abs(filepath.Join("..", "bin", "ndfq-image.tar"))
	return p
}

// ProbeJobManifest is config/job/'s Job running ndfq's own image by
// digest, as make probe-image renders it (a release's _dist/probe-job.yaml
// is the same file for the released image).
func ProbeJobManifest() string {
	if p := os.Getenv("NDFQ_PROBE_JOB"); p != "" {
		return p
	}
	p, _ := filepath.Abs(filepath.Join("..", "bin", "probe-job.yaml"))
	return p
}

// ProbeImageRef is the image the probe Job runs, by digest: ndfq's own,
// as make probe-image named it in bin/probe-job.yaml.
func ProbeImageRef(ctx context.Context) string {
	GinkgoHelper()
	ref, err := probeImageRef(ctx)
	Expect(err).NotTo(HaveOccurred())
	return ref
}

// probeImageRef is ProbeImageRef's reading, for setup that has no Gomega.
func probeImageRef(ctx context.Context) (string, error) {
	f, err := os.Open(ProbeJobManifest())
	if err != nil {
		return "", err
	}
	defer f.Close()
	var ref string
	if err := decoder.DecodeEach(ctx, f, func(_ context.Context, obj k8s.Object) error {
		if job, ok := obj.(*batchv1.Job); ok {
			ref = job.Spec.Template.Spec.Containers[0].Image
		}
		return nil
	}); err != nil {
		return "", err
	}
	if !strings.Contains(ref, "@sha256:") {
		return "", fmt.Errorf("the Job of %s runs ndfq's image by digest, not %q", ProbeJobManifest(), ref)
	}
	return ref, nil
}

// WaitJob waits (wait-probe-job) until the Job completes or fails and
// says which; its pods' logs go to the spec's output.
func (e *Env) WaitJob(ctx context.Context, ns, name string) batchv1.JobConditionType {
	GinkgoHelper()
	var done batchv1.JobConditionType
	Expect(wait.Until(ctx, wait.ProbeJob, "job "+ns+"/"+name+" to finish", func(ctx context.Context) (bool, string, error) {
		j, err := e.Clientset.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, c := range j.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == "True" {
				done = c.Type
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("active %d", j.Status.Active), nil
	})).To(Succeed())
	pods, err := e.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + name})
	Expect(err).NotTo(HaveOccurred())
	for _, p := range pods.Items {
		logs, err := e.Clientset.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
		GinkgoWriter.Printf("job pod %s (%s) logs (%v):\n%s\n", p.Name, p.Status.Phase, err, logs)
	}
	return done
}

// OracleChecksConfigMap puts the oracle's checks of releases kept in the
// suite's cache (ndfq oracle check, topology validation) in ConfigMap name
// of ns, made if need be, as config/job/ tells operators to: the probe in
// the cluster has no other way to see them.
func (e *Env) OracleChecksConfigMap(ctx context.Context, ns, name string) {
	GinkgoHelper()
	dir := filepath.Join(e.Settings.CacheDir, "oracle-checks")
	entries, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred(), "the oracle's checks in %s", dir)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{}}
	for _, f := range entries {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		Expect(err).NotTo(HaveOccurred())
		cm.Data[f.Name()] = string(data)
	}
	Expect(putConfigMap(ctx, e.Clientset, cm)).To(Succeed(), "ConfigMap %s/%s", ns, name)
}

// putConfigMap creates cm, and its namespace if need be, or replaces an
// earlier one of the same name (a kept cluster, a second run).
func putConfigMap(ctx context.Context, cs kubernetes.Interface, cm *corev1.ConfigMap) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cm.Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return err
	}
	_, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	return err
}
