package release

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"sigs.k8s.io/yaml"
)

func TestCheckVersion(t *testing.T) {
	for _, ok := range []string{"v0.1.0", "v1.2.3-rc.1"} {
		if err := CheckVersion(ok); err != nil {
			t.Errorf("CheckVersion(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "0.1.0", "v0.1", "v0.1.0+meta", "latest"} {
		if err := CheckVersion(bad); err == nil || !strings.Contains(err.Error(), "VERSION") {
			t.Errorf("CheckVersion(%q) = %v, want an error naming VERSION", bad, err)
		}
	}
}

func TestJobManifestRunsTheImageByDigest(t *testing.T) {
	tmpl, err := os.ReadFile("../../config/job/probe-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const ref = "ghcr.io/ndfq/ndfq@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	out, err := JobManifest(tmpl, ref, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "image: "+ref+"\n") || strings.Contains(string(out), "image: "+JobTemplateImage) {
		t.Errorf("the Job manifest does not run %s alone:\n%s", ref, out)
	}
	if _, err := JobManifest([]byte("kind: Job\n"), ref, "v0.1.0"); err == nil {
		t.Error("a template without the placeholder image was accepted")
	}
}

func TestArchivesAreReproducibleAndChecksummed(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "ndfq")
	if err := os.WriteFile(src, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	files := []ArchiveFile{{Name: "ndfq", Src: src, Mode: 0o755}}
	a, b := filepath.Join(dir, "a.tar.gz"), filepath.Join(dir, "b.tar.gz")
	if err := WriteArchive(a, files, when); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if err := WriteArchive(b, files, when); err != nil {
		t.Fatal(err)
	}
	sa, _ := FileSHA256(a)
	sb, _ := FileSHA256(b)
	if sa != sb {
		t.Errorf("the same inputs gave two archives: %s and %s", sa, sb)
	}
	if err := WriteChecksums(dir, []string{"b.tar.gz", "a.tar.gz"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "checksums.txt"))
	if want := sa + "  a.tar.gz\n" + sb + "  b.tar.gz\n"; string(got) != want {
		t.Errorf("checksums.txt = %q, want %q", got, want)
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.CommandContext(context.Background(), "sha256sum", "-c", "checksums.txt")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c: %v\n%s", err, out)
		}
	}
}

func TestKrewManifestCarriesEachArchivesChecksum(t *testing.T) {
	dir := t.TempDir()
	for i, p := range Platforms {
		if err := os.WriteFile(filepath.Join(dir, ArchiveName("v0.1.0", p)), []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := KrewManifest(dir, "v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	var k krewPlugin
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.Spec.Platforms) != len(Platforms) {
		t.Fatalf("%d platforms, want %d", len(k.Spec.Platforms), len(Platforms))
	}
	for i, p := range k.Spec.Platforms {
		want, _ := FileSHA256(filepath.Join(dir, ArchiveName("v0.1.0", Platforms[i])))
		if p.SHA256 != want || !strings.HasSuffix(p.URI, "/v0.1.0/"+ArchiveName("v0.1.0", Platforms[i])) || p.Bin != "ndfq" {
			t.Errorf("platform %d = %+v, want sha256 %s and the archive's URL", i, p, want)
		}
	}
}

// The image goes through the whole release path: built from a real ndfq
// binary, written to its archive and read back, pushed to a registry (one
// in this process), pulled back by digest, and the binary inside says the
// version it was released as.
func TestImagePushedAndPulledBackByDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ndfq")
	}
	const version = "v0.1.0-test.1"
	dir := t.TempDir()
	host := Platform{"linux", runtime.GOARCH}
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binary it pushes")
	}
	bin := filepath.Join(dir, "ndfq")
	ctx := context.Background()
	if err := (Build{Dir: "../..", Version: version, Commit: "test"}).Binary(ctx, host, bin); err != nil {
		t.Fatal(err)
	}
	idx, err := ImageIndex(ImageInput{Version: version, Commit: "test", Binaries: map[Platform]string{host: bin}, Created: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, ImageArchiveName(version))
	archived, err := WriteImageArchive(archive, idx, "ghcr.io/ndfq/ndfq", version)
	if err != nil {
		t.Fatal(err)
	}
	fromArchive, done, err := ReadImageArchive(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer done()

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	repo := strings.TrimPrefix(srv.URL, "http://") + "/ndfq/ndfq"
	pushed, err := Push(ctx, fromArchive, repo)
	if err != nil {
		t.Fatal(err)
	}
	if digestOf(pushed) != digestOf(archived) {
		t.Errorf("pushed %s, but the archive names %s", pushed, archived)
	}
	pulled, err := PullIndex(ctx, pushed)
	if err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(dir, "pulled-ndfq")
	if err := ExtractBinary(pulled, host, got); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, got, "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var info struct{ Version, Commit string }
	if err := json.Unmarshal(out, &info); err != nil || info.Version != version || info.Commit != "test" {
		t.Errorf("the pulled binary says %s (%v), want version %s commit test", out, err, version)
	}
	wrong := repo + "@sha256:" + strings.Repeat("0", 64)
	if _, err := PullIndex(ctx, wrong); err == nil {
		t.Errorf("pulling %s, a digest never pushed, succeeded", wrong)
	}
}

func digestOf(ref string) string { return ref[strings.LastIndex(ref, "@")+1:] }

// ndfq's own image needs a static binary: there is no libc in it.
func TestImageRefusesDynamicBinaries(t *testing.T) {
	_, err := ImageIndex(ImageInput{Version: "v0.1.0", Binaries: map[Platform]string{{"linux", "amd64"}: "/bin/ls"}})
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("a dynamically linked binary: %v", err)
	}
}
