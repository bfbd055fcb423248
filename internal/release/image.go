package release

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// DefaultImageRepo is where the release workflow pushes ndfq's image.
const DefaultImageRepo = "ghcr.io/ndfq/ndfq"

// ImageArchiveName is the OCI archive of a release's image in dist.
func ImageArchiveName(version string) string { return "ndfq-image_" + version + ".oci.tar" }

// ImageInput is what ndfq's own image is made of: one static binary per
// linux platform, at /ndfq, as the entrypoint.
type ImageInput struct {
	Version, Commit string
	Binaries        map[Platform]string
	Created         time.Time
}

const annotationVersion = "org.opencontainers.image.version"

// ImageIndex assembles the image index; no Docker build, and the same
// binaries and time give the same digest.
func ImageIndex(in ImageInput) (v1.ImageIndex, error) {
	var platforms []Platform
	for p := range in.Binaries {
		if p.OS != "linux" {
			return nil, fmt.Errorf("the image is for linux nodes; %s is not", p)
		}
		platforms = append(platforms, p)
	}
	if len(platforms) == 0 {
		return nil, errors.New("no linux binary for the image")
	}
	sort.Slice(platforms, func(i, j int) bool { return platforms[i].String() < platforms[j].String() })
	labels := map[string]string{
		annotationVersion:                   in.Version,
		"org.opencontainers.image.revision": in.Commit,
		"org.opencontainers.image.source":   Homepage,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.title":    "ndfq",
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		img, err := binaryImage(in.Binaries[p], p, labels, in.Created)
		if err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch}},
		})
	}
	return mutate.Annotations(idx, labels).(v1.ImageIndex), nil
}

func binaryImage(bin string, p Platform, labels map[string]string, created time.Time) (v1.Image, error) {
	if err := checkStatic(bin); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "ndfq", Mode: 0o755, Size: int64(len(data)), ModTime: created.UTC(), Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(data); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerTar := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = p.OS, p.Arch
	cf.Created = v1.Time{Time: created.UTC()}
	cf.Config.Entrypoint = []string{"/ndfq"}
	cf.Config.User = "65532" // the Job runs it as this user; nothing in it needs root
	cf.Config.Labels = labels
	return mutate.ConfigFile(img, cf)
}

// checkStatic refuses a dynamically linked binary: the image has no libc.
func checkStatic(bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("%s: %w", bin, err)
	}
	dynamic := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
	if err := f.Close(); err != nil {
		return err
	}
	if dynamic {
		return fmt.Errorf("%s is dynamically linked: an image without libc needs it built with CGO_ENABLED=0", bin)
	}
	return nil
}

// DigestRef is repo@sha256:... of an index.
func DigestRef(repo string, idx v1.ImageIndex) (string, error) {
	h, err := idx.Digest()
	if err != nil {
		return "", err
	}
	if _, err := name.NewRepository(repo); err != nil {
		return "", fmt.Errorf("image repository %q: %w", repo, err)
	}
	return repo + "@" + h.String(), nil
}

// WriteImageArchive writes idx as an OCI archive (an image layout in one
// tar) that `ctr images import` and `kind load image-archive` read, naming
// it repo:version and repo@digest: the Job's reference by digest then
// resolves on a node with no registry. It returns repo@digest.
func WriteImageArchive(path string, idx v1.ImageIndex, repo, version string) (string, error) {
	ref, err := DigestRef(repo, idx)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "ndfq-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return "", err
	}
	for _, n := range []string{repo + ":" + version, ref} {
		if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
			"io.containerd.image.name":          n,
			"org.opencontainers.image.ref.name": version,
		})); err != nil {
			return "", err
		}
	}
	return ref, tarDir(dir, path)
}

// tarDir packs a folder with sorted names and no times or owners.
func tarDir(dir, out string) error {
	return writeFile(out, func(w io.Writer) error { return writeTarOf(w, dir) })
}

func writeTarOf(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel) + "/", Mode: 0o755, Typeflag: tar.TypeDir})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// ReadImageArchive reads the index an archive of WriteImageArchive holds;
// done removes the unpacked copy once the index is no longer needed.
func ReadImageArchive(path string) (idx v1.ImageIndex, done func(), err error) {
	dir, err := os.MkdirTemp("", "ndfq-image-")
	if err != nil {
		return nil, nil, err
	}
	done = func() { os.RemoveAll(dir) }
	defer func() {
		if err != nil {
			done()
		}
	}()
	if err := untar(path, dir); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("%s is not an OCI image archive: %w", path, err)
	}
	m, err := root.IndexManifest()
	if err != nil {
		return nil, nil, err
	}
	for _, d := range m.Manifests {
		if d.MediaType.IsIndex() {
			idx, err := root.ImageIndex(d.Digest)
			return idx, done, err
		}
	}
	return nil, nil, fmt.Errorf("%s holds no image index", path)
}

func untar(path, dir string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(h.Name) {
			return fmt.Errorf("entry %q leaves the archive", h.Name)
		}
		target := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.Create(target)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

// Push writes idx to `to` (a repository, tagged with the image's version,
// or repo:tag) with the credentials docker login and the credential
// helpers keep, and returns repo@digest.
func Push(ctx context.Context, idx v1.ImageIndex, to string, opts ...remote.Option) (string, error) {
	ref, err := name.ParseReference(to)
	if err != nil {
		return "", fmt.Errorf("--to %q: %w", to, err)
	}
	if _, isDigest := ref.(name.Digest); isDigest {
		return "", fmt.Errorf("--to %q: name a repository or a tag, not a digest", to)
	}
	tag, _ := ref.(name.Tag)
	if tag.TagStr() == "latest" && !hasExplicitTag(to) {
		m, err := idx.IndexManifest()
		if err != nil {
			return "", err
		}
		if v := m.Annotations[annotationVersion]; v != "" {
			tag = ref.Context().Tag(v)
		}
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	if err := remote.WriteIndex(tag, idx, opts...); err != nil {
		return "", fmt.Errorf("push %s: %w", tag, err)
	}
	return DigestRef(ref.Context().Name(), idx)
}

func hasExplicitTag(ref string) bool {
	t, err := name.NewTag(ref, name.StrictValidation)
	return err == nil && t.TagStr() != ""
}

// PullIndex reads an index back by digest and checks the registry served
// exactly those bytes.
func PullIndex(ctx context.Context, digestRef string, opts ...remote.Option) (v1.ImageIndex, error) {
	d, err := name.NewDigest(digestRef)
	if err != nil {
		return nil, err
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	idx, err := remote.Index(d, opts...)
	if err != nil {
		return nil, fmt.Errorf("pull %s: %w", digestRef, err)
	}
	got, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	if got.String() != d.DigestStr() {
		return nil, fmt.Errorf("pull %s: the registry served %s", digestRef, got)
	}
	return idx, nil
}

// ExtractBinary writes the platform's /ndfq out of an index.
func ExtractBinary(idx v1.ImageIndex, p Platform, out string) error {
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range m.Manifests {
		if d.Platform == nil || d.Platform.OS != p.OS || d.Platform.Architecture != p.Arch {
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		rc := mutate.Extract(img)
		defer rc.Close()
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err != nil {
				return fmt.Errorf("no /ndfq in the %s image: %w", p, err)
			}
			if h.Name == "ndfq" || h.Name == "/ndfq" {
				f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
				if err != nil {
					return err
				}
				_, err = io.Copy(f, tr)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				return err
			}
		}
	}
	return fmt.Errorf("the index has no %s image", p)
}
