package nodeimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// fileEntry is one file, folder or symlink of an image layer.
type fileEntry struct {
	Path string // absolute path inside the image
	Src  string // host file to copy; empty for folders and links
	Link string // symlink target
	Mode int64
}

// layerFromFiles packs entries into one uncompressed tar layer in memory
// (the largest binary is ~150 MB); go-containerregistry compresses it.
func layerFromFiles(entries []fileEntry) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	dirs := map[string]bool{}
	for _, e := range entries {
		for d := filepath.Dir(e.Path); d != "/" && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	var dirList []string
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d[1:] + "/", Mode: 0o755}); err != nil {
			return nil, err
		}
	}
	for _, e := range entries {
		h := &tar.Header{Name: e.Path[1:], Mode: e.Mode}
		switch {
		case e.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Link
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
		default:
			data, err := os.ReadFile(e.Src)
			if err != nil {
				return nil, err
			}
			h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
			if err := tw.WriteHeader(h); err != nil {
				return nil, err
			}
			if _, err := tw.Write(data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithCompressionLevel(gzip.BestSpeed))
}

// imageSpec is a container image built from layers, FROM scratch.
type imageSpec struct {
	Tags       []string
	Layers     []v1.Layer
	Entrypoint []string
	Cmd        []string
	Labels     map[string]string
}

// writeImageArchive writes a docker-archive tarball that `ctr images
// import` reads, with every tag pointing at the one image. The platform
// must be set or containerd will not match the image to the node.
func writeImageArchive(path string, spec imageSpec) error {
	img, err := mutate.AppendLayers(empty.Image, spec.Layers...)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cf.Config.Entrypoint, cf.Config.Cmd = spec.Entrypoint, spec.Cmd
	cf.Config.Labels = spec.Labels
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range spec.Tags {
		ref, err := name.NewTag(t)
		if err != nil {
			return err
		}
		refs[ref] = img
	}
	return tarball.MultiRefWriteToFile(path, refs)
}
