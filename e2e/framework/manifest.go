package framework

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/e2e-framework/klient/decoder"
)

// ApplyManifest creates every object of a file under the repository's
// config/ (as a user would kubectl apply it) and deletes them at cleanup.
func (e *Env) ApplyManifest(ctx context.Context, path string) {
	GinkgoHelper()
	path = filepath.Join("..", path)
	r := e.Cluster.Client.Resources()
	each := func(ctx context.Context, h decoder.HandlerFunc) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		return decoder.DecodeEach(ctx, f, h)
	}
	Expect(each(ctx, decoder.CreateHandler(r))).To(Succeed(), "apply %s", path)
	DeferCleanup(func(ctx SpecContext) {
		Expect(each(ctx, decoder.DeleteIgnoreNotFound(r))).To(Succeed(), "delete %s", path)
	})
}
